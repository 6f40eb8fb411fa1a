import { featuresFingerprint } from '../../domain/dsp/featuresFingerprint';
import type { LearnBlock } from '../../domain/impulse/impulseEvents';
import type { ReadStore } from '../../stores/readstore/readStore';
import { ANOMALY_MODELS, anomalyModelId, type AnomalyModelDocument } from '../anomalyModels/anomalyModelDocument';
import { DSP_FEATURES, dspFeaturesId, type DspFeaturesDocument } from '../dspFeatures/dspFeaturesDocument';
import { KERAS_MODELS, kerasModelId, type KerasModelDocument } from '../kerasModels/kerasModelDocument';
import { IMPULSES, type ImpulseDocument } from './impulseDocument';

/** What a model records of the features of one DSP block it was trained on. */
interface TrainedOn {
  dspId: number;
  x: string;
  /** The features' read-model position; absent from anomaly models recorded before it was kept. */
  position?: string;
}

/** What project information says about an impulse. */
export interface ImpulseStatus {
  /** The impulse exists and has at least one block. */
  created: boolean;
  /** Created, and every DSP block has a saved config. */
  configured: boolean;
  /**
   * Configured, with at least one DSP block, and every DSP block's current generated features made
   * for the blocks and parameters it has now (featuresFingerprint): a later change to the block's
   * parameters, axes, version or its input block's windowing makes it false until the features are
   * generated again. Every learn block also needs a model trained on exactly those current features
   * (learnBlockTrained): regenerating a block's features makes the impulse incomplete until each
   * learn block reading them is trained again. A learn block type this service cannot train keeps it
   * incomplete.
   */
  complete: boolean;
  defaultImpulseId: number | null;
}

export class ImpulseQueries {
  constructor(private readonly store: ReadStore) {}

  private get impulses() {
    return this.store.collection<ImpulseDocument>(IMPULSES);
  }

  /** The project's live impulses, lowest id (the default) first. */
  forProject(projectId: number): Promise<ImpulseDocument[]> {
    return this.impulses.find({ projectId, deleted: false }, { sort: { _id: 1 } });
  }

  /** One live impulse of the project; the default (lowest live id) when `impulseId` is undefined. */
  async byId(projectId: number, impulseId?: number): Promise<ImpulseDocument | null> {
    if (impulseId !== undefined) return this.impulses.findOne({ _id: impulseId, projectId, deleted: false });
    const [first] = await this.impulses.find({ projectId, deleted: false }, { sort: { _id: 1 }, limit: 1 });
    return first ?? null;
  }

  /** The live impulse holding DSP block `dspId` (block ids are unique within a project). */
  withDspBlock(projectId: number, dspId: number): Promise<ImpulseDocument | null> {
    return this.impulses.findOne({ projectId, deleted: false, 'dspBlocks.id': dspId });
  }

  async statusOf(projectId: number, impulseId?: number): Promise<ImpulseStatus> {
    const impulse = await this.byId(projectId, impulseId);
    const defaultImpulse = impulseId === undefined ? impulse : await this.byId(projectId);
    const defaultImpulseId = defaultImpulse?.id ?? null;
    if (!impulse) return { created: false, configured: false, complete: false, defaultImpulseId };
    const created = impulse.inputBlocks.length + impulse.dspBlocks.length + impulse.learnBlocks.length + impulse.postProcessingBlocks.length > 0;
    const configured = created && impulse.dspBlocks.every((b) => impulse.dspConfigs[String(b.id)] !== undefined);
    const complete = configured && impulse.dspBlocks.length > 0 && (await this.featuresCurrent(impulse)) && (await this.learnBlocksTrained(impulse));
    return { created, configured, complete, defaultImpulseId };
  }

  /**
   * Whether the project's learn block `learnId` has a model trained on its DSP blocks' current
   * features; false when it has no model, or when any of those features was regenerated, cleared or
   * made stale by a change to the impulse since (the model then needs training again).
   */
  async learnBlockTrained(projectId: number, learnId: number): Promise<boolean> {
    const impulse = await this.impulses.findOne({ projectId, deleted: false, 'learnBlocks.id': learnId });
    const block = impulse?.learnBlocks.find((b) => b.id === learnId);
    return impulse !== null && block !== undefined && this.blockTrained(impulse, block);
  }

  private async learnBlocksTrained(impulse: ImpulseDocument): Promise<boolean> {
    for (const block of impulse.learnBlocks) if (!(await this.blockTrained(impulse, block))) return false;
    return true;
  }

  private async blockTrained(impulse: ImpulseDocument, block: LearnBlock): Promise<boolean> {
    const trainedOn = await this.modelFeatures(impulse.projectId, block);
    // The model must have read exactly the DSP blocks the learn block reads now, each as it is now.
    if (!trainedOn || block.dsp.length === 0 || trainedOn.length !== block.dsp.length) return false;
    for (const dspId of block.dsp) {
      const features = await this.currentFeatures(impulse, dspId);
      const used = trainedOn.find((f) => f.dspId === dspId);
      if (!features || !used || used.x !== features.categories.training.x || used.position !== features._position) return false;
    }
    return true;
  }

  /** What the block's latest model was trained on; null when it has none or is of a type this service does not train. */
  private async modelFeatures(projectId: number, block: LearnBlock): Promise<readonly TrainedOn[] | null> {
    switch (block.type) {
      case 'keras':
      case 'keras-regression':
        return (await this.store.collection<KerasModelDocument>(KERAS_MODELS).findOne({ _id: kerasModelId(projectId, block.id) }))?.model?.features ?? null;
      case 'anomaly':
        return (await this.store.collection<AnomalyModelDocument>(ANOMALY_MODELS).findOne({ _id: anomalyModelId(projectId, block.id) }))?.model?.features ?? null;
      default:
        return null;
    }
  }

  /** Whether every DSP block's latest features (not cleared) were made for the impulse as it is now. */
  private async featuresCurrent(impulse: ImpulseDocument): Promise<boolean> {
    for (const block of impulse.dspBlocks) if (!(await this.currentFeatures(impulse, block.id))) return false;
    return true;
  }

  /** The DSP block's latest features when they are not cleared and were made for the impulse as it is now. */
  private async currentFeatures(impulse: ImpulseDocument, dspId: number): Promise<DspFeaturesDocument | null> {
    const doc = await this.store.collection<DspFeaturesDocument>(DSP_FEATURES).findOne({ _id: dspFeaturesId(impulse.projectId, dspId) });
    if (!doc || !doc.current || doc.impulseId !== impulse.id) return null;
    if (doc.impulseFingerprint === undefined || doc.impulseFingerprint !== featuresFingerprint(impulse, dspId)) return null;
    return doc;
  }
}
