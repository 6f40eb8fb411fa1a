// Classification of a stored sample (ClassifyApi.classifySample, classifySampleV2): the whole impulse,
// every DSP block then every learn block, on every window of the sample, cut as generate-features
// cuts it. The work runs in the API's thread pool, a few samples at a time (Admission); a sample
// giving more windows than MAX_CLASSIFY_WINDOWS is refused with a 400 before its bytes are read.
// Unknown sample, or another project's: 404. A learn block without a trained model: 400 naming it.
import { z } from 'zod';
import { classificationAnswers } from '../../commands/classify/classificationAnswer';
import { classifyStoredSample } from '../../commands/classify/classifySample';
import { buildImpulseRuntimeSpec, type ImpulseRuntimeSpecDeps } from '../../commands/classify/impulseRuntimeSpec';
import { NotFoundError, ValidationError } from '../../domain/shared/errors';
import type { ProjectDocument } from '../../projections/projects/projectDocument';
import type { ApiDeps } from '../apiDeps';
import { Admission } from '../http/admission';
import { intParam, operation, queryBoolean, queryInteger, type Operation } from '../http/operation';
import { sampleView } from './rawDataRoutes';
import { readSampleValues } from './sampleValues';
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
    const values = await readSampleValues(deps.blobs, deps.decodeValues, sample, undefined);
    const input = built.spec.inputBlock;
    return {
      classifications: classificationAnswers(built.spec, built.impulse.learnBlocks, sample, windows),
      sample: {
        sample: sampleView(sample),
        payload: {
          device_name: sample.deviceName ?? undefined,
          device_type: sample.deviceType ?? '',
          sensors: sample.sensors.map((x, index) => ({ index, name: x.name, units: x.units })),
          values,
          intervalMs: sample.intervalMs,
          frequencyHz: sample.frequency,
        },
        totalPayloadLength: sample.valuesCount,
        datastreamPayloads: [],
      },
      windowSizeMs: input.windowSizeMs ?? 0,
      windowIncreaseMs: input.windowIncreaseMs ?? 0,
      alreadyInDatabase: true,
    };
  };

  return [
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
    operation({
      operationId: 'classifySampleV2',
      method: 'get',
      path: '/api/:projectId/classify/v2/:sampleId',
      summary: 'Classify every window of a stored sample with the current impulse; always answered directly, never as a job',
      auth: 'any',
      query: ClassifyQuery,
      async handler({ params, query, project }) {
        return classify(project, params, query);
      },
    }),
  ];
}
