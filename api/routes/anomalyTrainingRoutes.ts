// The K-means anomaly learn block (the SDK's LearnApi getAnomaly / setAnomaly / getAnomalyMetadata,
// JobsApi trainAnomaly). Settings and models live on the block's own stream (domain/learn/
// anomalyEvents.ts) and are read from the anomalyModels read model; a learnId that is not a K-means
// anomaly block of the project's impulses is a 404. Training is a job (commands/training/
// anomalyTraining.ts); what it would fail on is checked here, so bad input is a 400 and no job.
import { z } from 'zod';
import { TRAIN_ANOMALY } from '../../commands/training/anomalyTraining';
import type { DspMetadata } from '../../domain/dsp/dspMetadata';
import { findAnomalyBlock } from '../../domain/learn/anomalyBlocks';
import { anomalyDecider, CONFIDENCE_RULE, MAX_ANOMALY_AXES, MAX_CLUSTER_COUNT } from '../../domain/learn/anomalyDecider';
import { anomalyStream, DEFAULT_ANOMALY_SEED, DEFAULT_CLUSTER_COUNT, DEFAULT_MINIMUM_CONFIDENCE_RATING } from '../../domain/learn/anomalyEvents';
import type { AnomalyModel } from '../../domain/learn/anomalyKmeans';
import { NotFoundError, ValidationError } from '../../domain/shared/errors';
import type { DspFeaturesDocument } from '../../projections/dspFeatures/dspFeaturesDocument';
import { handleCommand } from '../../commands/handleCommand';
import type { ApiDeps } from '../apiDeps';
import { requestProjectJob } from './projectJobRequest';
import { requestContext } from '../auth/principal';
import { modelTypes } from '../views/learnModelTypes';
import { intParam, operation, type Operation } from '../http/operation';

const confidence = z.number().finite().min(CONFIDENCE_RULE.min).max(CONFIDENCE_RULE.max);
const SetAnomalyParameterRequest = z.object({ minimumConfidenceRating: confidence.optional() });
const StartTrainingRequestAnomaly = z.object({
  axes: z.array(z.number().int().min(0)).min(1).max(MAX_ANOMALY_AXES),
  clusterCount: z.number().int().min(1).max(MAX_CLUSTER_COUNT).default(DEFAULT_CLUSTER_COUNT),
  minimumConfidenceRating: confidence,
  skipEmbeddingsAndMemory: z.boolean().optional(),
  thresholds: z.array(z.unknown()).optional(),
  /** Not in the SDK: the K-means seed (default 1), so a training can be reproduced or varied. */
  seed: z.number().int().min(0).max(2 ** 32 - 1).optional(),
});

const THRESHOLD_HELP = 'Windows that score above this are flagged as anomalies. A score is the distance to the nearest cluster minus its radius: training windows score 0 or below.';
const threshold = (value: number) => ({ key: 'min_anomaly_score', description: 'Minimum anomaly score', helpText: THRESHOLD_HELP, value });

export function anomalyTrainingOperations(deps: ApiDeps): Operation[] {
  const blockOf = async (params: Record<string, string>) => {
    const projectId = intParam(params, 'projectId');
    const learnId = intParam(params, 'learnId');
    const found = findAnomalyBlock(await deps.impulses.forProject(projectId), learnId);
    if (!found) throw new NotFoundError(`No K-means anomaly block ${learnId} in this project's impulses`, 'LEARN_BLOCK_NOT_FOUND');
    return { projectId, learnId, ...found };
  };
  const readJson = async <T>(sha256: string): Promise<T> => {
    const chunks: Buffer[] = [];
    for await (const chunk of await deps.blobs.open(sha256)) chunks.push(chunk as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T;
  };
  /** Each DSP block's current features, or undefined where there are none. */
  const featuresOf = (projectId: number, dspIds: readonly number[]) => Promise.all(dspIds.map(async (dspId) => ({ dspId, features: await deps.dspFeatures.current(projectId, dspId) })));

  return [
    operation({
      operationId: 'getAnomaly',
      method: 'get',
      path: '/api/:projectId/training/anomaly/:learnId',
      summary: "An anomaly block's settings, its selectable feature axes and whether it is trained",
      auth: 'any',
      async handler({ params }) {
        const { projectId, learnId, block } = await blockOf(params);
        const doc = await deps.anomalyModels.byLearnBlock(projectId, learnId);
        const parts = await featuresOf(projectId, block.dsp);
        const labels: string[] = [];
        const classes = new Set<string>();
        let sampleCount = 0;
        for (const { dspId, features } of parts) {
          if (!features) continue;
          const metadata = await readJson<DspMetadata>(features.metadata);
          for (let i = 0; i < features.featureCount; i++) labels.push(metadata.featureLabels[i] ?? `DSP block ${dspId} feature ${i}`);
          features.classes.forEach((c) => classes.add(c));
          sampleCount = Math.max(sampleCount, metadata.includedSamples?.length ?? 0);
        }
        const selectedAxes = doc?.axes ?? labels.map((_, i) => i);
        const minimumConfidenceRating = doc?.minimumConfidenceRating ?? DEFAULT_MINIMUM_CONFIDENCE_RATING;
        return {
          dependencies: { classes: [...classes], blockNames: parts.map((p) => `DSP block ${p.dspId}`), featureCount: labels.length, sampleCount, outputClasses: [] },
          name: block.name,
          axes: labels.map((label, ix) => ({ ix, label, selected: selectedAxes.includes(ix), favourite: false })),
          trained: Boolean(doc?.model),
          clusterCount: doc?.clusterCount ?? DEFAULT_CLUSTER_COUNT,
          selectedAxes,
          minimumConfidenceRating,
          thresholds: [threshold(minimumConfidenceRating)],
        };
      },
    }),
    operation({
      operationId: 'setAnomaly',
      method: 'post',
      path: '/api/:projectId/training/anomaly/:learnId',
      summary: "Change an anomaly block's settings: the minimum anomaly score flagged as an anomaly",
      auth: 'any',
      body: SetAnomalyParameterRequest,
      async handler({ params, body, principal, requestId, settle }) {
        const { projectId, learnId } = await blockOf(params);
        const ctx = requestContext(principal, requestId);
        const { appended } = await handleCommand(deps.events, anomalyStream(projectId, learnId), anomalyDecider, { type: 'ChangeAnomalySettings', data: { projectId, learnId, ...body, changed: ctx.now.toISOString() } }, ctx);
        await settle(appended?.position);
        return {};
      },
    }),
    operation({
      operationId: 'trainAnomaly',
      method: 'post',
      path: '/api/:projectId/jobs/train/anomaly/:learnId',
      summary: 'Start a job that trains the K-means anomaly block on the training features of its DSP blocks',
      auth: 'any',
      body: StartTrainingRequestAnomaly,
      async handler({ params, body, principal, requestId, settle }) {
        const { projectId, learnId, block } = await blockOf(params);
        const parts = await featuresOf(projectId, block.dsp);
        const missing = parts.filter((p) => !p.features).map((p) => p.dspId);
        if (missing.length > 0) throw new ValidationError(`No features for DSP block ${missing.join(', ')}: run generate-features first`, 'FEATURES_NOT_GENERATED');
        const features = parts.map((p) => p.features!) as DspFeaturesDocument[];
        const windows = features[0]!.categories.training.windowCount;
        if (features.some((f) => f.categories.training.windowCount !== windows)) throw new ValidationError("The DSP blocks' features have different training windows: generate the features of every block again", 'FEATURES_MISMATCH');
        const featureCount = features.reduce((n, f) => n + f.featureCount, 0);
        body.axes.forEach((axis, i) => {
          if (axis >= featureCount) throw new ValidationError(`"axes[${i}]": axis ${axis} is beyond the ${featureCount} features of this block`);
        });
        if (new Set(body.axes).size !== body.axes.length) throw new ValidationError('"axes": an axis is listed twice');
        if (body.clusterCount > windows) throw new ValidationError(`"clusterCount": ${body.clusterCount} clusters need at least as many training windows; there are ${windows}`);
        const ctx = requestContext(principal, requestId);
        const settings = { axes: body.axes, clusterCount: body.clusterCount, minimumConfidenceRating: body.minimumConfidenceRating };
        // The settings a training uses become the block's, as the Studio's "Start training" saves them.
        await handleCommand(deps.events, anomalyStream(projectId, learnId), anomalyDecider, { type: 'ChangeAnomalySettings', data: { projectId, learnId, ...settings, changed: ctx.now.toISOString() } }, ctx);
        const jobId = await requestProjectJob({ events: deps.events, ids: deps.ids, projects: deps.projects }, { principal, settle }, {
          projectId,
          category: 'Train anomaly detection model',
          categoryKey: TRAIN_ANOMALY,
          key: String(learnId),
          parameters: { learnId, ...settings, seed: body.seed ?? DEFAULT_ANOMALY_SEED },
          notificationList: 'train',
        }, ctx);
        return { id: jobId };
      },
    }),
    operation({
      operationId: 'getAnomalyMetadata',
      method: 'get',
      path: '/api/:projectId/training/anomaly/:learnId/metadata',
      summary: "A trained anomaly block's model: the scaler, the clusters' centres and radii (maxError), the axes",
      auth: 'any',
      async handler({ params }) {
        const { projectId, learnId } = await blockOf(params);
        const doc = await deps.anomalyModels.byLearnBlock(projectId, learnId);
        const minimumConfidenceRating = doc?.minimumConfidenceRating ?? DEFAULT_MINIMUM_CONFIDENCE_RATING;
        if (!doc?.model) return { hasTrainedModel: false, scale: [], mean: [], clusters: [], axes: [], defaultMinimumConfidenceRating: minimumConfidenceRating, thresholds: [threshold(minimumConfidenceRating)] };
        const model = await readJson<AnomalyModel>(doc.model.model);
        return {
          created: doc.model.trained,
          scale: model.scaler.scale,
          mean: model.scaler.mean,
          clusters: model.clusters.map((c) => ({ center: c.center, maxError: c.radius })),
          axes: model.axes,
          defaultMinimumConfidenceRating: doc.model.settings.minimumConfidenceRating,
          hasTrainedModel: true,
          ...modelTypes(!(await deps.impulses.learnBlockTrained(projectId, learnId))),
          thresholds: [threshold(minimumConfidenceRating)],
          // Not in the SDK: what made the model, as recorded (content hashes, log positions, seed).
          trainedFrom: { model: doc.model.model, jobId: doc.model.jobId, features: doc.model.features, settings: doc.model.settings, seed: doc.model.seed },
        };
      },
    }),
  ];
}
