// The keras (classification) learn block (LearnApi.getKeras/setKeras/getKerasMetadata,
// JobsApi.trainKerasJob). Settings are events on the block's own stream (domain/learn); training is
// a job like generate-features, refused with a 400 naming what is missing before any job exists: no
// features for a DSP block the learn block reads, one class only, or a layer stack that cannot be
// built on those features. A learnId that is not a keras block of the project's impulses is a 404.
import { z } from 'zod';
import { setKerasSettings } from '../../commands/training/kerasCommands';
import { planNetwork } from '../../domain/learn/kerasNetwork';
import { kerasModeOf, regressionTargets, type KerasMode, type RegressionMetrics } from '../../domain/learn/kerasRegression';
import { kerasPerformance } from '../../domain/learn/kerasPerformance';
import { applyKerasChange, DEFAULT_BATCH_SIZE, DEFAULT_KERAS_SETTINGS, MAX_LAYERS, type KerasLayerType, type KerasSettings, type KerasSettingsChange } from '../../domain/learn/kerasSettings';
import type { LearnBlock } from '../../domain/impulse/impulseEvents';
import { NotFoundError, ValidationError } from '../../domain/shared/errors';
import type { DspFeaturesDocument } from '../../projections/dspFeatures/dspFeaturesDocument';
import { kerasModelOf } from '../../projections/kerasModels/kerasModelDocument';
import type { ApiDeps } from '../apiDeps';
import { requestProjectJob } from './projectJobRequest';
import { requestContext } from '../auth/principal';
import { modelTypes } from '../views/learnModelTypes';
import { intParam, operation, type Operation } from '../http/operation';

const number = z.number();
const VisualLayer = z.object({
  type: z.string().max(64),
  neurons: number.optional(),
  kernelSize: number.optional(),
  dropoutRate: number.optional(),
  columns: number.optional(),
  stack: number.optional(),
  enabled: z.boolean().optional(),
  organizationModelId: number.optional(),
});

/**
 * The SDK's SetKerasParameterRequest. The fields this service acts on are checked by the decider,
 * which names the field; the others (augmentation, profiling, GPU, akida...) are accepted and have no
 * effect, as a client sends them with every save.
 */
const SetKerasParameterRequest = z.object({
  mode: z.string().max(64).optional(),
  script: z.string().optional(),
  minimumConfidenceRating: number.optional(),
  selectedModelType: z.enum(['float32', 'int8', 'akida', 'requiresRetrain']).optional(),
  visualLayers: z.array(VisualLayer).max(MAX_LAYERS).optional(),
  trainingCycles: number.optional(),
  learningRate: number.optional(),
  batchSize: number.optional(),
  trainTestSplit: number.optional(),
  autoClassWeights: z.boolean().optional(),
});
type SetKerasBody = z.infer<typeof SetKerasParameterRequest>;

const changeOf = (body: SetKerasBody): KerasSettingsChange => {
  const { selectedModelType: _ignored, visualLayers, ...rest } = body;
  // The layer type is checked by the decider (kerasSettings.ts checkLayer), which names the layer.
  return { ...rest, ...(visualLayers ? { visualLayers: visualLayers.map(({ organizationModelId: _o, ...l }) => ({ ...l, type: l.type as KerasLayerType })) } : {}) };
};

const hasChange = (change: KerasSettingsChange) => Object.values(change).some((v) => v !== undefined);

export function kerasTrainingOperations(deps: ApiDeps): Operation[] {
  /** The project's keras (or keras-regression) block `learnId` and its mode: a 404 when no live impulse has one. */
  const kerasBlock = async (projectId: number, learnId: number): Promise<LearnBlock & { mode: KerasMode }> => {
    for (const impulse of await deps.impulses.forProject(projectId)) {
      const block = impulse.learnBlocks.find((b) => b.id === learnId);
      const mode = block && kerasModeOf(block.type);
      if (block && mode) return { ...block, mode };
    }
    throw new NotFoundError(`No keras learn block ${learnId} in this project's impulses`, 'LEARN_BLOCK_NOT_FOUND');
  };
  /** The block's read model (null before any settings or model) and its settings, the defaults until set. */
  const blockState = async (projectId: number, learnId: number) => {
    const doc = await deps.kerasModels.byLearnBlock(projectId, learnId);
    return { doc, settings: doc?.settings ?? DEFAULT_KERAS_SETTINGS };
  };
  const settingsOf = async (projectId: number, learnId: number): Promise<KerasSettings> => (await blockState(projectId, learnId)).settings;
  /** The current features of each DSP block the learn block reads, or a 400 naming the first that has none. */
  const featuresOf = async (projectId: number, block: LearnBlock): Promise<DspFeaturesDocument[]> => {
    if (block.dsp.length === 0) throw new ValidationError(`learn block ${block.id} reads no DSP block: add one to the impulse`, 'NO_FEATURES');
    const all: DspFeaturesDocument[] = [];
    for (const dspId of block.dsp) {
      const features = await deps.dspFeatures.current(projectId, dspId);
      if (!features) throw new ValidationError(`No features for DSP block ${dspId}: run generate-features for it first`, 'NO_FEATURES');
      all.push(features);
    }
    return all;
  };

  return [
    operation({
      operationId: 'getKeras',
      method: 'get',
      path: '/api/:projectId/training/keras/:learnId',
      summary: 'The settings of a keras learn block and what it depends on',
      auth: 'any',
      async handler({ params, project }) {
        const learnId = intParam(params, 'learnId');
        const block = await kerasBlock(project.id, learnId);
        const { doc, settings } = await blockState(project.id, learnId);
        const features = (await Promise.all(block.dsp.map((dspId) => deps.dspFeatures.current(project.id, dspId)))).filter((f): f is DspFeaturesDocument => f !== null);
        const impulse = (await deps.impulses.forProject(project.id)).find((i) => i.learnBlocks.some((b) => b.id === learnId));
        const featureCount = features.reduce((n, f) => n + f.featureCount, 0);
        const classes = features[0]?.classes ?? [];
        return {
          dependencies: {
            classes,
            blockNames: block.dsp.map((id) => impulse?.dspBlocks.find((b) => b.id === id)?.name ?? String(id)),
            featureCount,
            sampleCount: features[0]?.categories.training.windowCount ?? 0,
            outputClasses: classes,
          },
          trained: doc?.model !== null && doc?.model !== undefined,
          name: block.name,
          type: block.type,
          script: '',
          minimumConfidenceRating: settings.minimumConfidenceRating,
          selectedModelType: 'float32',
          mode: 'visual',
          visualLayers: settings.visualLayers,
          trainingCycles: settings.trainingCycles,
          learningRate: settings.learningRate,
          batchSize: settings.batchSize,
          defaultBatchSize: DEFAULT_BATCH_SIZE,
          shape: `(${featureCount},)`,
          trainTestSplit: settings.trainTestSplit,
          autoClassWeights: settings.autoClassWeights,
          useLearnedOptimizer: false,
          augmentationPolicyImage: 'none',
          transferLearningModels: [],
          profileInt8: false,
          skipEmbeddingsAndMemory: true,
          showAdvancedTrainingSettings: false,
          showAugmentationTrainingSettings: false,
          thresholds: [minimumConfidenceThreshold(settings)],
        };
      },
    }),
    operation({
      operationId: 'setKeras',
      method: 'post',
      path: '/api/:projectId/training/keras/:learnId',
      summary: 'Change the settings of a keras learn block (visual mode)',
      auth: 'any',
      body: SetKerasParameterRequest,
      async handler({ params, project, body, principal, requestId, settle }) {
        const learnId = intParam(params, 'learnId');
        await kerasBlock(project.id, learnId);
        const { position } = await setKerasSettings(deps.events, project.id, learnId, changeOf(body), requestContext(principal, requestId));
        await settle(position);
        return {};
      },
    }),
    operation({
      operationId: 'trainKerasJob',
      method: 'post',
      path: '/api/:projectId/jobs/train/keras/:learnId',
      summary: 'Start a job that trains a keras learn block on the current features (settings in the body are saved first)',
      auth: 'any',
      body: SetKerasParameterRequest,
      async handler({ params, project, body, principal, requestId, settle }) {
        const projectId = project.id;
        const learnId = intParam(params, 'learnId');
        const block = await kerasBlock(projectId, learnId);
        const features = await featuresOf(projectId, block);
        const ctx = requestContext(principal, requestId);
        const change = changeOf(body);
        // Everything is checked on the settings the job would use before anything is saved: a refused request changes nothing.
        const settings = applyKerasChange(await settingsOf(projectId, learnId), change);
        const [first] = features;
        for (const f of features.slice(1)) {
          if (f.categories.training.windowCount !== first!.categories.training.windowCount || f.classes.join('\n') !== first!.classes.join('\n')) {
            throw new ValidationError(`The features of DSP blocks ${first!.dspId} and ${f.dspId} have different windows: generate features for both again`, 'FEATURES_MISMATCH');
          }
        }
        if (first!.categories.training.windowCount < 2) throw new ValidationError(`There are ${first!.categories.training.windowCount} training windows in the features: add training data and generate features again`, 'NO_TRAINING_DATA');
        if (block.mode === 'regression') {
          const targets = regressionTargets(first!.classes);
          if ('notANumber' in targets) throw new ValidationError(`The label "${targets.notANumber}" is not a number: a regression block learns numbers, so every label must be one (relabel the samples and generate features again)`, 'LABEL_NOT_A_NUMBER');
          if (first!.classes.length < 2) throw new ValidationError('The features hold one label value: a regression needs at least two, add data with another value and generate features again', 'ONE_CLASS');
        } else if (first!.classes.length < 2) {
          throw new ValidationError(`The features have ${first!.classes.length === 1 ? `one class ("${first!.classes[0]}")` : 'no class'}: a classifier needs at least two, add data of another class and generate features again`, 'ONE_CLASS');
        }
        planNetwork(settings.visualLayers, features.reduce((n, f) => n + f.featureCount, 0), first!.classes.length, block.mode);
        if (hasChange(change)) await setKerasSettings(deps.events, projectId, learnId, change, ctx);
        const jobId = await requestProjectJob({ events: deps.events, ids: deps.ids, projects: deps.projects }, { principal, settle }, {
          projectId,
          category: 'Train model',
          categoryKey: 'train-keras',
          key: String(learnId),
          // The settings go with the job: the model is trained with what was asked for, whatever is saved meanwhile.
          parameters: { learnId, settings },
          notificationList: 'train',
        }, ctx);
        return { id: jobId };
      },
    }),
    operation({
      operationId: 'getKerasMetadata',
      method: 'get',
      path: '/api/:projectId/training/keras/:learnId/metadata',
      summary: 'The trained model of a keras learn block: classes, layers, validation metrics',
      auth: 'any',
      async handler({ params, project }) {
        const learnId = intParam(params, 'learnId');
        const block = await kerasBlock(project.id, learnId);
        const { doc, settings } = await blockState(project.id, learnId);
        const model = doc?.model ? kerasModelOf(doc.model) : null;
        const stale = model !== null && !(await deps.impulses.learnBlockTrained(project.id, learnId));
        const common = { ...modelTypes(stale), mode: block.mode, imageInputScaling: '0..1', thresholds: [minimumConfidenceThreshold(settings)] };
        if (!model) return { created: new Date(0).toISOString(), layers: [], classNames: [], labels: [], modelValidationMetrics: [], hasTrainedModel: false, ...common };
        const inputSize = model.inputShape.reduce((a, b) => a * b, 1);
        const v = model.validation;
        return {
          created: model.trained,
          layers: [{ input: { shape: inputSize, name: 'x_input:0', type: "<dtype: 'float32'>" }, output: { shape: model.mode === 'regression' ? 1 : model.classes.length, name: 'Identity:0', type: "<dtype: 'float32'>" } }],
          classNames: model.classes,
          labels: model.classes,
          modelValidationMetrics: [
            {
              type: 'float32',
              loss: v.loss,
              accuracy: v.accuracy ?? undefined,
              confusionMatrix: v.confusionMatrix,
              report: v.report,
              onDevicePerformance: kerasPerformance(model, project.settings?.latencyDevice),
              visualization: 'none',
              isSupportedOnMcu: true,
              additionalMetrics: v.regression ? regressionAdditionalMetrics(v.regression) : [],
            },
          ],
          hasTrainedModel: true,
          ...common,
        };
      },
    }),
  ];
}

/** A regression model's measures as the SDK's AdditionalMetric list (a measure that was not finite is left out). */
function regressionAdditionalMetrics(m: RegressionMetrics): { name: string; value: string; fullPrecisionValue: number; tooltipText: string }[] {
  const metrics: [string, number | null, string][] = [
    ['Mean squared error', m.meanSquaredError, 'The mean of the squared differences between predicted and actual values, on the validation windows'],
    ['Mean absolute error', m.meanAbsoluteError, 'The mean of the absolute differences between predicted and actual values, on the validation windows'],
    ['Explained variance score', m.explainedVariance, "The share of the actual values' variance the predictions explain (1 is best)"],
  ];
  return metrics.filter((e): e is [string, number, string] => e[1] !== null).map(([name, value, tooltipText]) => ({ name, value: value.toFixed(4), fullPrecisionValue: value, tooltipText }));
}

function minimumConfidenceThreshold(settings: KerasSettings) {
  return { key: 'minimumConfidenceRating', description: 'Minimum confidence rating', helpText: 'Classifications below this confidence are reported as uncertain.', suggestedValue: DEFAULT_KERAS_SETTINGS.minimumConfidenceRating, value: settings.minimumConfidenceRating };
}
