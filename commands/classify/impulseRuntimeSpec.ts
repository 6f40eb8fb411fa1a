// The ImpulseRuntimeSpec of a project's impulse as it is now: its DSP blocks resolved as the
// generate-features job resolves them (resolveImpulseDsp, the impulse frequency from the samples
// when the input block names none), each with the scaler of its current features, and every learn
// block's latest trained model from the read models and blobs. A learn block without a model, or of
// a type this service cannot run, is refused with a 400 naming it: nothing is half-classified. A
// keras-regression block runs as a keras block whose spec says `mode: 'regression'`.
import { createHash } from 'node:crypto';
import { resolveImpulseDsp } from '../../domain/dsp/impulseDsp';
import { DspConfigurationError } from '../../domain/dsp/processingBlock';
import { timeSeriesWindowing, windowRows, WindowingError } from '../../domain/dsp/windows';
import type { AnomalyModel } from '../../domain/learn/anomalyKmeans';
import { DEFAULT_MINIMUM_CONFIDENCE_RATING } from '../../domain/learn/anomalyEvents';
import { bytesBase64, type ImpulseRuntimeSpec, type RuntimeDspBlock, type RuntimeLearnBlock } from '../../domain/learn/impulseRuntime';
import { unpackKerasModel } from '../../domain/learn/kerasModelBlob';
import { kerasModeOf } from '../../domain/learn/kerasRegression';
import { DEFAULT_KERAS_SETTINGS } from '../../domain/learn/kerasSettings';
import { ValidationError } from '../../domain/shared/errors';
import type { AnomalyModelDocument } from '../../projections/anomalyModels/anomalyModelDocument';
import type { DspFeaturesDocument } from '../../projections/dspFeatures/dspFeaturesDocument';
import type { ImpulseDocument } from '../../projections/impulses/impulseDocument';
import type { KerasModelDocument } from '../../projections/kerasModels/kerasModelDocument';
import type { SampleDocument } from '../../projections/samples/sampleDocument';
import type { BlobStore } from '../../stores/blobstore/blobStore';
import { commonFrequency, readAllBytes } from '../dsp/generateFeatures';

export interface ImpulseRuntimeSpecDeps {
  blobs: BlobStore;
  projects: { byId(projectId: number): Promise<{ name: string } | null> };
  impulses: { byId(projectId: number, impulseId?: number): Promise<ImpulseDocument | null> };
  samples: { ids(projectId: number, category: 'training' | 'testing'): Promise<SampleDocument[]> };
  dspFeatures: { current(projectId: number, dspId: number): Promise<DspFeaturesDocument | null> };
  kerasModels: { byLearnBlock(projectId: number, learnId: number): Promise<KerasModelDocument | null> };
  anomalyModels: { byLearnBlock(projectId: number, learnId: number): Promise<AnomalyModelDocument | null> };
}

/** A trained model is missing: the impulse cannot classify until its learn block is trained. */
export class NoTrainedModelError extends ValidationError {
  constructor(block: { id: number; name: string }) {
    super(`Learn block ${block.id} ("${block.name}") has no trained model: train it first`, 'NO_TRAINED_MODEL');
  }
}

export interface BuiltImpulseRuntimeSpec {
  spec: ImpulseRuntimeSpec;
  /** The impulse it was built from (the classify answers show its learn blocks). */
  impulse: ImpulseDocument;
  /** Changes whenever the impulse or a model does: a thread keeps its runner while it stays the same. */
  fingerprint: string;
}

async function blobBytes(blobs: BlobStore, sha256: string): Promise<Uint8Array> {
  return readAllBytes(await blobs.open(sha256));
}

/**
 * The spec of the project's impulse `impulseId` (the default one when undefined). Throws a 400
 * (ValidationError, DspConfigurationError, WindowingError) naming what is missing or wrong.
 */
export async function buildImpulseRuntimeSpec(deps: ImpulseRuntimeSpecDeps, projectId: number, impulseId?: number): Promise<BuiltImpulseRuntimeSpec> {
  try {
    return await buildSpec(deps, projectId, impulseId);
  } catch (error) {
    if (error instanceof DspConfigurationError || error instanceof WindowingError) throw new ValidationError(error.message, 'DSP_CONFIGURATION');
    throw error;
  }
}

async function buildSpec(deps: ImpulseRuntimeSpecDeps, projectId: number, impulseId?: number): Promise<BuiltImpulseRuntimeSpec> {
  const project = await deps.projects.byId(projectId);
  if (!project) throw new ValidationError(`Project ${projectId} does not exist`, 'NO_PROJECT');
  const impulse = await deps.impulses.byId(projectId, impulseId);
  if (!impulse) throw new ValidationError('The project has no impulse: create one first', 'NO_IMPULSE');
  if (impulse.dspBlocks.length === 0) throw new ValidationError('The impulse has no DSP block', 'NO_DSP_BLOCK');
  if (impulse.learnBlocks.length === 0) throw new ValidationError('The impulse has no learn block', 'NO_LEARN_BLOCK');
  const inputIds = new Set(impulse.dspBlocks.map((b) => b.input));
  if (inputIds.size !== 1) throw new ValidationError('The impulse\'s DSP blocks read different input blocks: this service classifies impulses with one input block', 'SEVERAL_INPUT_BLOCKS');
  const inputBlock = impulse.inputBlocks.find((b) => inputIds.has(b.id));
  if (!inputBlock) throw new ValidationError(`The impulse has no input block ${[...inputIds][0]}`, 'NO_INPUT_BLOCK');
  if (inputBlock.type !== 'time-series' && inputBlock.type !== 'image') throw new ValidationError(`Input block ${inputBlock.id} is of type "${inputBlock.type}": this service classifies time-series and image impulses`, 'INPUT_BLOCK_TYPE');

  // As generate-features: an input block without a frequency takes the samples' most common one.
  let defaultFrequency: number | undefined;
  if (inputBlock.type === 'time-series' && inputBlock.frequencyHz === undefined) {
    defaultFrequency = commonFrequency([...(await deps.samples.ids(projectId, 'training')), ...(await deps.samples.ids(projectId, 'testing'))]);
  }
  const fingerprint = createHash('sha256').update(`${impulse._position}`);
  const dspBlocks: RuntimeDspBlock[] = [];
  for (const b of impulse.dspBlocks) {
    const dsp = resolveImpulseDsp(impulse, b.id, {}, defaultFrequency);
    const features = await deps.dspFeatures.current(projectId, b.id);
    const scaler = features?.scaler ? { mean: features.scaler.mean, scale: features.scaler.scale } : null;
    fingerprint.update(`|${b.id}:${features?._position ?? ''}`);
    dspBlocks.push({ dspBlock: dsp.dspBlock, inputBlock: dsp.inputBlock, config: dsp.config, frequencyHz: dsp.frequencyHz, scaler });
  }

  const learnBlocks: RuntimeLearnBlock[] = [];
  for (const l of impulse.learnBlocks) {
    const kerasMode = kerasModeOf(l.type);
    if (kerasMode !== undefined) {
      const doc = await deps.kerasModels.byLearnBlock(projectId, l.id);
      if (!doc?.model) throw new NoTrainedModelError(l);
      const files = unpackKerasModel(await blobBytes(deps.blobs, doc.model.model));
      fingerprint.update(`|${l.id}:${doc.model.model}`);
      // The model event says what the model is; the block type says what it should be.
      const regression = (doc.model.mode ?? 'classification') === 'regression';
      if (regression !== (kerasMode === 'regression')) throw new NoTrainedModelError(l);
      learnBlocks.push({
        type: 'keras',
        ...(regression ? { mode: 'regression' as const } : {}),
        id: l.id,
        name: l.name,
        dsp: [...l.dsp],
        classes: [...doc.model.classes],
        minimumConfidenceRating: doc.settings?.minimumConfidenceRating ?? doc.model.settings.minimumConfidenceRating ?? DEFAULT_KERAS_SETTINGS.minimumConfidenceRating,
        model: { modelJson: files.modelJson, weightsBase64: bytesBase64(files.weights) },
      });
    } else if (l.type === 'anomaly') {
      const doc = await deps.anomalyModels.byLearnBlock(projectId, l.id);
      if (!doc?.model) throw new NoTrainedModelError(l);
      const model = JSON.parse(Buffer.from(await blobBytes(deps.blobs, doc.model.model)).toString('utf8')) as AnomalyModel;
      fingerprint.update(`|${l.id}:${doc.model.model}`);
      learnBlocks.push({ type: 'anomaly', id: l.id, name: l.name, dsp: [...l.dsp], minimumConfidenceRating: doc.minimumConfidenceRating ?? doc.model.settings.minimumConfidenceRating ?? DEFAULT_MINIMUM_CONFIDENCE_RATING, model });
    } else {
      throw new ValidationError(`Learn block ${l.id} ("${l.name}") is of type "${l.type}", which this service cannot run`, 'LEARN_BLOCK_TYPE');
    }
  }

  const timeSeries = inputBlock.type === 'time-series' ? timeSeriesWindowing(inputBlock, dspBlocks[0]!.frequencyHz) : undefined;
  // The raw window holds every axis a DSP block reads, in the order they are first named.
  const axes = timeSeries ? [...new Set(impulse.dspBlocks.flatMap((b) => b.axes))] : [];
  const spec: ImpulseRuntimeSpec = {
    projectId,
    projectName: project.name,
    impulseId: impulse.id,
    inputBlock,
    axes,
    windowRows: timeSeries ? windowRows(timeSeries) : 1,
    frequencyHz: timeSeries?.frequencyHz ?? 0,
    dspBlocks,
    learnBlocks,
  };
  return { spec, impulse, fingerprint: fingerprint.digest('hex') };
}
