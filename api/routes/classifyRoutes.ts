// Classification of a stored sample (ClassifyApi.classifySample, classifySampleV2): the whole impulse,
// every DSP block then every learn block, on every window of the sample, cut as generate-features
// cuts it. The work runs in the API's thread pool, a few samples at a time (Admission); a sample
// giving more windows than MAX_CLASSIFY_WINDOWS is refused with a 400 before its bytes are read.
// Unknown sample, or another project's: 404. A learn block without a trained model: 400 naming it.
// Model testing (JobsApi.startClassifyJob, ClassifyApi.getClassifyJobResult/Page,
// getClassifyMetricsAllVariants): a job classifies every testing sample the same way
// (commands/classify/modelTesting.ts); its latest run per impulse is answered from its results blob.
import { z } from 'zod';
import { classificationAnswers } from '../../commands/classify/classificationAnswer';
import { classifyStoredSample } from '../../commands/classify/classifySample';
import { buildImpulseRuntimeSpec, type ImpulseRuntimeSpecDeps } from '../../commands/classify/impulseRuntimeSpec';
import { MODEL_TESTING } from '../../commands/classify/modelTesting';
import { readAllBytes } from '../../commands/dsp/generateFeatures';
import { regressionTestingMetrics, testingAccuracy, windowPredictions, type ModelTestingResults } from '../../domain/learn/modelTestingResults';
import type { RegressionMetrics } from '../../domain/learn/kerasRegression';
import { NotFoundError, ValidationError } from '../../domain/shared/errors';
import type { SampleDocument } from '../../projections/samples/sampleDocument';
import { requestContext } from '../auth/principal';
import type { ProjectDocument } from '../../projections/projects/projectDocument';
import type { ApiDeps } from '../apiDeps';
import { requestProjectJob } from './projectJobRequest';
import { Admission } from '../http/admission';
import { intParam, operation, queryBoolean, queryInteger, type Operation } from '../http/operation';
import { sampleView, sampleWithPayload } from './rawDataRoutes';
import { selectedImpulseId } from './selectedImpulse';

/** Classifications waiting for a place in the pool; more at once are refused (503) rather than queued. */
const MAX_WAITING_CLASSIFICATIONS = 8;

const ClassifyQuery = z.object({
  includeDebugInfo: queryBoolean.optional(),
  impulseId: queryInteger.optional(),
  truncateStructuredLabels: queryBoolean.optional(),
  variant: z.string().max(32).optional(),
});

/** The model variants this service has: float32 only (no quantisation). */
export function checkVariant(variant: string | undefined): void {
  if (variant !== undefined && variant !== 'float32') throw new ValidationError(`"variant": only the float32 model exists in this service, not "${variant}"`, 'VARIANT');
}

/** A regression block's errors on the testing windows as the SDK's AdditionalMetric list (one that is not finite is left out). */
function regressionAdditionalMetrics(m: RegressionMetrics): { name: string; value: string; fullPrecisionValue: number; tooltipText: string }[] {
  const metrics: [string, number | null, string][] = [
    ['Mean squared error', m.meanSquaredError, 'The mean of the squared differences between predicted and expected values, on the testing windows'],
    ['Mean absolute error', m.meanAbsoluteError, 'The mean of the absolute differences between predicted and expected values, on the testing windows'],
    ['Explained variance score', m.explainedVariance, "The share of the expected values' variance the predictions explain (1 is best)"],
  ];
  return metrics.filter((e): e is [string, number, string] => e[1] !== null).map(([name, value, tooltipText]) => ({ name, value: value.toFixed(4), fullPrecisionValue: value, tooltipText }));
}

export const runtimeSpecDeps = (deps: ApiDeps): ImpulseRuntimeSpecDeps => ({
  blobs: deps.blobs,
  projects: deps.projects,
  impulses: deps.impulses,
  samples: deps.samples,
  dspFeatures: deps.dspFeatures,
  kerasModels: deps.kerasModels,
  anomalyModels: deps.anomalyModels,
});

export function classifyOperations(deps: ApiDeps): Operation[] {
  const admission = new Admission(deps.dspPool.size, MAX_WAITING_CLASSIFICATIONS, 'sample classifications');
  const specDeps = runtimeSpecDeps(deps);

  const classify = async (project: ProjectDocument, params: Record<string, string>, query: z.infer<typeof ClassifyQuery>) => {
    checkVariant(query.variant);
    const sample = await deps.samples.byId(project.id, intParam(params, 'sampleId'));
    if (!sample) throw new NotFoundError(`Sample ${params.sampleId} not found in project ${project.id}`, 'SAMPLE_NOT_FOUND');
    const built = await buildImpulseRuntimeSpec(specDeps, project.id, await selectedImpulseId(deps.impulses, project, query.impulseId));
    const windows = await admission.run(() => classifyStoredSample({ blobs: deps.blobs, pool: deps.dspPool }, built, sample));
    const input = built.spec.inputBlock;
    return {
      classifications: classificationAnswers(built.spec, built.impulse.learnBlocks, sample, windows),
      sample: await sampleWithPayload(deps, sample, undefined),
      windowSizeMs: input.windowSizeMs ?? 0,
      windowIncreaseMs: input.windowIncreaseMs ?? 0,
      alreadyInDatabase: true,
    };
  };

  /** The latest model testing run of the impulse asked for, its results and the testing samples that still exist. */
  const latestResults = async (project: ProjectDocument, impulseId: number | undefined) => {
    const impulse = await deps.impulses.byId(project.id, await selectedImpulseId(deps.impulses, project, impulseId));
    const latest = impulse ? await deps.modelTesting.latest(project.id, impulse.id) : null;
    if (!latest) return null;
    const results = JSON.parse(Buffer.from(await readAllBytes(await deps.blobs.open(latest.results))).toString('utf8')) as ModelTestingResults;
    const samples = new Map<number, SampleDocument>((await deps.samples.ids(project.id, 'testing')).map((s) => [s.id, s]));
    // A sample deleted or moved out of testing since the run is left out.
    return { results: { ...results, samples: results.samples.filter((s) => samples.has(s.sampleId)) }, samples };
  };
  const modelResults = (found: NonNullable<Awaited<ReturnType<typeof latestResults>>>, page: ModelTestingResults['samples']) =>
    page.map((s) => {
      const sample = found.samples.get(s.sampleId)!;
      const learn = { learnBlocks: found.results.thresholds.map((t) => ({ id: t.learnId, type: t.type, ...(t.mode ? { mode: t.mode } : {}), minimumConfidenceRating: t.minimumConfidenceRating })), frequencyHz: found.results.frequencyHz };
      return { sampleId: s.sampleId, sample: sampleView(sample), classifications: classificationAnswers(learn, found.results.learnBlocks, sample, s.windows) };
    });
  const noResults = () => new NotFoundError('This impulse has no model testing results: start a classify job first', 'NO_MODEL_TESTING');
  const ResultQuery = z.object({ featureExplorerOnly: queryBoolean.optional(), variant: z.string().max(32).optional(), impulseId: queryInteger.optional(), truncateStructuredLabels: queryBoolean.optional() });
  const PageQuery = ResultQuery.extend({ limit: queryInteger.optional(), offset: queryInteger.optional() }).passthrough();

  return [
    operation({
      operationId: 'startClassifyJob',
      method: 'post',
      path: '/api/:projectId/jobs/classify',
      summary: 'Model testing: classify every testing sample with the current impulse, in a job',
      auth: 'any',
      body: z.object({ modelVariants: z.array(z.string().max(32)).max(8).optional(), skipFeatureGeneration: z.boolean().optional() }).passthrough(),
      query: z.object({ impulseId: queryInteger.optional() }),
      async handler({ principal, query, body, requestId, settle, project }) {
        for (const v of body.modelVariants ?? []) checkVariant(v);
        const impulseId = await selectedImpulseId(deps.impulses, project, query.impulseId);
        // Refused before any job exists when the impulse cannot classify (a learn block untrained...).
        const built = await buildImpulseRuntimeSpec(specDeps, project.id, impulseId);
        if ((await deps.samples.ids(project.id, 'testing')).length === 0) throw new ValidationError('There is no testing data: add samples to the testing set first', 'NO_TESTING_DATA');
        const ctx = requestContext(principal, requestId);
        const jobId = await requestProjectJob({ events: deps.events, ids: deps.ids, projects: deps.projects }, { principal, settle }, {
          projectId: project.id,
          category: 'Classify',
          categoryKey: MODEL_TESTING,
          key: String(built.spec.impulseId),
          parameters: { impulseId: built.spec.impulseId },
          notificationList: 'modelTesting',
        }, ctx);
        return { id: jobId };
      },
    }),
    operation({
      operationId: 'getClassifyJobResult',
      method: 'get',
      path: '/api/:projectId/classify/all/result',
      summary: 'The latest model testing run: every testing sample\'s classification, each window\'s prediction, accuracy and confusion matrix',
      auth: 'any',
      query: ResultQuery,
      async handler({ query, project }) {
        checkVariant(query.variant);
        const found = await latestResults(project, query.impulseId);
        if (!found) throw noResults();
        return {
          result: query.featureExplorerOnly ? [] : modelResults(found, found.results.samples),
          predictions: windowPredictions(found.results),
          accuracy: testingAccuracy(found.results),
          additionalMetricsByLearnBlock: regressionTestingMetrics(found.results).map((r) => ({
            learnBlockId: r.learnId,
            learnBlockName: found.results.learnBlocks.find((b) => b.id === r.learnId)?.name ?? String(r.learnId),
            additionalMetrics: regressionAdditionalMetrics(r.metrics),
          })),
          availableVariants: ['float32'],
        };
      },
    }),
    operation({
      operationId: 'getClassifyJobResultPage',
      method: 'get',
      path: '/api/:projectId/classify/all/result/page',
      summary: 'One page of the latest model testing run, by testing sample (offset, limit)',
      auth: 'any',
      query: PageQuery,
      async handler({ query, project }) {
        checkVariant(query.variant);
        const offset = query.offset ?? 0;
        const limit = query.limit ?? 50;
        if (offset < 0) throw new ValidationError('"offset" must be 0 or more', 'INVALID_INPUT');
        if (limit < 1 || limit > 1000) throw new ValidationError('"limit" must be from 1 to 1000', 'INVALID_INPUT');
        const found = await latestResults(project, query.impulseId);
        if (!found) throw noResults();
        const page = found.results.samples.slice(offset, offset + limit);
        return { result: modelResults(found, page), predictions: windowPredictions(found.results, page), totalCount: found.results.samples.length };
      },
    }),
    operation({
      operationId: 'getClassifyMetricsAllVariants',
      method: 'get',
      path: '/api/:projectId/classify/all/metrics',
      summary: 'The latest model testing run\'s accuracy per model variant (float32 only here)',
      auth: 'any',
      query: z.object({ impulseId: queryInteger.optional() }),
      async handler({ query, project }) {
        const found = await latestResults(project, query.impulseId);
        if (!found) return { metrics: [] };
        const accuracy = testingAccuracy(found.results).accuracyScore;
        return { metrics: [{ variant: 'float32', ...(accuracy === undefined ? {} : { accuracy }) }] };
      },
    }),
    operation({
      operationId: 'classifySample',
      method: 'get',
      path: '/api/:projectId/classify/:sampleId',
      summary: 'Classify every window of a stored sample with the current impulse (deprecated in the SDK for v2)',
      auth: 'any',
      query: ClassifyQuery,
      async handler({ params, query, project }) {
        return classify(project, params, query);
      },
    }),
    // The SDK's classifySampleV2 sends POST (no body); GET is answered alike.
    ...(['post', 'get'] as const).map((method) =>
      operation({
        operationId: method === 'post' ? 'classifySampleV2' : 'classifySampleV2Get',
        method,
        path: '/api/:projectId/classify/v2/:sampleId',
        summary: 'Classify every window of a stored sample with the current impulse; always answered directly, never as a job',
        auth: 'any',
        query: ClassifyQuery,
        async handler({ params, query, project }) {
          return classify(project, params, query);
        },
      }),
    ),
  ];
}
