// The generated features of a DSP block (DSPApi): X and y as stored .npy, the feature labels, the
// metadata. All read the block's current DspFeaturesGenerated record (projections/dspFeatures) and
// the blobs it names; a block whose features were never generated, or cleared since, has none.
import { z } from 'zod';
import { FEATURE_CATEGORIES } from '../../domain/dsp/dspFeaturesEvents';
import type { DspMetadata } from '../../domain/dsp/dspMetadata';
import { featureExplorerResponse, type FeatureExplorer } from '../../domain/dsp/featureExplorer';
import type { FeatureImportanceResponse } from '../../domain/dsp/featureImportance';
import { NotFoundError, ValidationError } from '../../domain/shared/errors';
import type { DspFeaturesDocument } from '../../projections/dspFeatures/dspFeaturesDocument';
import type { ApiDeps } from '../apiDeps';
import { intParam, operation, queryBoolean, type Operation } from '../http/operation';

const DataQuery = z.object({ raw: queryBoolean.optional() });
const featureAxis = z.string().regex(/^\d{1,6}$/, 'expected a feature index').transform(Number);
const GraphQuery = z.object({ featureAx1: featureAxis.optional(), featureAx2: featureAxis.optional(), featureAx3: featureAxis.optional() });
const MetadataQuery = z.object({ excludeIncludedSamples: queryBoolean.optional(), category: z.enum(['training', 'testing', 'validation', 'all']).optional() });

export function dspFeaturesOperations(deps: ApiDeps): Operation[] {
  const current = async (params: Record<string, string>): Promise<DspFeaturesDocument> => {
    const projectId = intParam(params, 'projectId');
    const dspId = intParam(params, 'dspId');
    const features = await deps.dspFeatures.current(projectId, dspId);
    if (!features || !(await deps.impulses.withDspBlock(projectId, dspId))) {
      throw new NotFoundError(`No features generated for DSP block ${dspId}: run the generate-features job first`, 'FEATURES_NOT_GENERATED');
    }
    return features;
  };
  const readBlob = async (sha256: string): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    for await (const chunk of await deps.blobs.open(sha256)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };
  const metadataOf = async (features: DspFeaturesDocument): Promise<DspMetadata> => JSON.parse((await readBlob(features.metadata)).toString('utf8')) as DspMetadata;
  const npy = (axis: 'x' | 'y') =>
    operation({
      operationId: axis === 'x' ? 'downloadDspData' : 'downloadDspLabels',
      method: 'get',
      path: `/api/:projectId/dsp-data/:dspId/${axis}/:category`,
      summary: axis === 'x' ? 'The features of a category: float32 .npy, windows × features (raw=true: the raw windows, windows × values)' : "The windows' classes of a category: float32 .npy, 1-based into the metadata's labels",
      auth: 'any',
      query: DataQuery,
      async handler({ ctx, params, query }) {
        const category = params.category as (typeof FEATURE_CATEGORIES)[number];
        if (!FEATURE_CATEGORIES.includes(category)) throw new ValidationError(`"category": expected training or testing, got ${JSON.stringify(params.category)}`);
        const features = await current(params);
        let sha256 = features.categories[category][axis];
        if (query.raw && axis === 'x') {
          // Results recorded before the job stored raw windows have none: a new run makes them.
          const raw = features.categories[category].raw;
          if (raw === undefined) throw new NotFoundError('These features were generated before raw windows were stored: run the generate-features job again', 'RAW_NOT_GENERATED');
          sha256 = raw;
        }
        ctx.state.fileBody = { type: 'application/octet-stream', body: await deps.blobs.open(sha256) };
        return {};
      },
    });
  return [
    operation({
      operationId: 'dspSampleTrainedFeatures',
      method: 'get',
      path: '/api/:projectId/dsp/:dspId/features/get-graph/:category',
      summary: "The feature explorer of a category: sampled windows with their UMAP coordinates (reducing blocks) and the requested features",
      auth: 'any',
      query: GraphQuery,
      async handler({ params, query }) {
        const category = params.category as (typeof FEATURE_CATEGORIES)[number];
        if (!FEATURE_CATEGORIES.includes(category)) throw new ValidationError(`"category": expected training or testing, got ${JSON.stringify(params.category)}`);
        const features = await current(params);
        if (features.explorer === null) throw new NotFoundError('The feature explorer was skipped in the last feature generation (skipFeatureExplorer)', 'EXPLORER_NOT_GENERATED');
        const explorer = JSON.parse((await readBlob(features.explorer)).toString('utf8')) as Record<string, FeatureExplorer>;
        const axes = [query.featureAx1 ?? 0, query.featureAx2 ?? 1, query.featureAx3 ?? 2];
        return { ...featureExplorerResponse(explorer[category]!, axes) };
      },
    }),
    operation({
      operationId: 'getDspFeatureImportance',
      method: 'get',
      path: '/api/:projectId/dsp/:dspId/features/importance',
      summary: 'Feature importance per class of the last feature generation, when it was calculated',
      auth: 'any',
      async handler({ params }) {
        const features = await current(params);
        if (features.importance === null) return { hasFeatureImportance: false, labels: {} };
        return { ...(JSON.parse((await readBlob(features.importance)).toString('utf8')) as FeatureImportanceResponse) };
      },
    }),
    npy('x'),
    npy('y'),
    operation({
      operationId: 'getDspFeatureLabels',
      method: 'get',
      path: '/api/:projectId/dsp/:dspId/features/labels',
      summary: 'The names of the feature columns of the generated features',
      auth: 'any',
      async handler({ params }) {
        return { labels: (await metadataOf(await current(params))).featureLabels };
      },
    }),
    operation({
      operationId: 'getDspMetadata',
      method: 'get',
      path: '/api/:projectId/dsp/:dspId/metadata',
      summary: 'The metadata of the generated features (config, labels, windows, included samples)',
      auth: 'any',
      query: MetadataQuery,
      async handler({ params, query }) {
        const features = await current(params);
        const metadata = await metadataOf(features);
        let includedSamples = metadata.includedSamples;
        if (query.category === 'training' || query.category === 'testing') {
          // Rows are training samples first; the record says how many windows each category has.
          let rows = 0;
          const firstTesting = features.categories.training.windowCount;
          includedSamples = includedSamples.filter((s) => {
            const inTraining = rows < firstTesting;
            rows += s.windowCount;
            return query.category === 'training' ? inTraining : !inTraining;
          });
        }
        if (query.category === 'validation') includedSamples = [];
        return { ...metadata, generated: true, includedSamples: query.excludeIncludedSamples ? [] : includedSamples };
      },
    }),
  ];
}
