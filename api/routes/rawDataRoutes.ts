import { asOf, asOfParameter, keepUnlessAsOf } from './asOf';
import { z } from 'zod';
import { deleteSample } from '../../commands/samples/sampleCommands';
import { ValidationError, NotFoundError } from '../../domain/shared/errors';
import type { SampleDocument } from '../../projections/samples/sampleDocument';
import type { SampleFilters } from '../../projections/samples/sampleQueries';
import type { Position } from '../../stores/eventstore/eventStore';
import type { ApiDeps } from '../apiDeps';
import { actorOf, requestContext } from '../auth/principal';
import { intParam, operation, queryBoolean, queryInteger, type Operation } from '../http/operation';
import { readSampleValues } from './sampleValues';

const Category = z.enum(['training', 'testing', 'validation', 'post-processing', 'all']);
const queryNumber = z.string().regex(/^-?\d+(\.\d+)?$/, 'expected a number').transform(Number);

const Filters = {
  category: Category,
  labels: z.string().optional(),
  filename: z.string().max(256).optional(),
  search: z.string().max(256).optional(),
  signatureValidity: z.enum(['both', 'valid', 'invalid']).optional(),
  minLength: queryNumber.optional(),
  maxLength: queryNumber.optional(),
  minFrequency: queryNumber.optional(),
  maxFrequency: queryNumber.optional(),
  dataType: z.enum(['audio', 'image']).optional(),
  minId: queryInteger.optional(),
  maxId: queryInteger.optional(),
  minDate: z.iso.datetime({ offset: true }).optional(),
  maxDate: z.iso.datetime({ offset: true }).optional(),
  includeDisabled: z.enum(['both', 'enabled', 'disabled']).optional(),
  metadata: z.string().optional(),
};
const ListQuery = z.object({
  ...Filters,
  limit: queryInteger.optional(),
  offset: queryInteger.optional(),
  asOf: asOfParameter.optional(),
  excludeSensors: queryBoolean.optional(),
  sortBy: z.enum(['id-desc', 'random']).optional(),
  truncateStructuredLabels: queryBoolean.optional(),
  proposedActionsJobId: queryInteger.optional(),
});
const CountQuery = z.object({ ...Filters, asOf: asOfParameter.optional() });

type FilterQuery = z.infer<typeof CountQuery>;

function filtersOf(q: FilterQuery): SampleFilters {
  let labels: string[] | undefined;
  if (q.labels !== undefined) {
    try {
      const parsed: unknown = JSON.parse(q.labels);
      if (!Array.isArray(parsed) || !parsed.every((l) => typeof l === 'string')) throw new Error();
      labels = parsed;
    } catch {
      throw new ValidationError('Invalid query parameters: "labels" must be a JSON array of strings, e.g. ["idle","wave"]');
    }
  }
  return {
    category: q.category,
    ...(labels ? { labels } : {}),
    ...(q.filename ? { filename: q.filename } : {}),
    ...(q.search ? { search: q.search } : {}),
    ...(q.signatureValidity ? { signatureValidity: q.signatureValidity } : {}),
    ...(q.minLength !== undefined ? { minLength: q.minLength } : {}),
    ...(q.maxLength !== undefined ? { maxLength: q.maxLength } : {}),
    ...(q.minFrequency !== undefined ? { minFrequency: q.minFrequency } : {}),
    ...(q.maxFrequency !== undefined ? { maxFrequency: q.maxFrequency } : {}),
    ...(q.dataType ? { dataType: q.dataType } : {}),
    ...(q.minId !== undefined ? { minId: q.minId } : {}),
    ...(q.maxId !== undefined ? { maxId: q.maxId } : {}),
    ...(q.minDate ? { minDate: new Date(q.minDate) } : {}),
    ...(q.maxDate ? { maxDate: new Date(q.maxDate) } : {}),
  };
}

const chartTypeOf = (s: SampleDocument) => (s.kind === 'image' ? 'image' : s.kind === 'video' ? 'video' : 'chart');

/** The SDK's Sample. */
/** The SDK's GetSampleResponse (without `success`): the sample and its values, the first `limit` rows of them if given. */
export async function sampleWithPayload(deps: Pick<ApiDeps, 'blobs' | 'decodeValues'>, sample: SampleDocument, limit: number | undefined): Promise<Record<string, unknown>> {
  return {
    sample: sampleView(sample),
    payload: {
      device_name: sample.deviceName ?? undefined,
      device_type: sample.deviceType ?? '',
      sensors: sample.sensors.map((x, index) => ({ index, name: x.name, units: x.units })),
      values: await readSampleValues(deps.blobs, deps.decodeValues, sample, limit),
      intervalMs: sample.intervalMs,
      frequencyHz: sample.frequency,
    },
    totalPayloadLength: sample.valuesCount,
    datastreamPayloads: [],
  };
}

export function sampleView(s: SampleDocument, options: { excludeSensors?: boolean } = {}): Record<string, unknown> {
  const sensors = options.excludeSensors ? [] : s.sensors.map((x, index) => ({ index, name: x.name, units: x.units }));
  return {
    id: s.id,
    filename: s.fileName,
    signatureValidate: s.signatureValidate,
    signatureMethod: s.signatureMethod ?? undefined,
    created: s.created,
    lastModified: s.created,
    category: s.category,
    coldstorageFilename: `${s.projectId}/${s.sha256}`,
    label: s.label ?? '',
    intervalMs: s.intervalMs,
    frequency: s.frequency,
    originalIntervalMs: s.intervalMs,
    originalFrequency: s.frequency,
    deviceName: s.deviceName ?? undefined,
    deviceType: s.deviceType ?? '',
    sensors,
    valuesCount: s.valuesCount,
    totalLengthMs: s.totalLengthMs,
    added: s.created,
    boundingBoxes: s.boundingBoxes,
    boundingBoxesType: 'object_detection',
    chartType: chartTypeOf(s),
    isDisabled: false,
    isProcessing: false,
    processingError: false,
    isCropped: false,
    metadata: s.metadata,
    projectId: s.projectId,
    sha256Hash: s.sha256,
    structuredLabels: s.structuredLabels.length > 0 ? s.structuredLabels : undefined,
    imageDimensions: s.width !== null && s.height !== null ? { width: s.width, height: s.height } : undefined,
    datastreams: [],
  };
}

export function rawDataOperations(deps: ApiDeps): Operation[] {
  const deleteAll = async (projectId: number, category: SampleFilters['category'], actor: string, requestId: string, settle: (p: Position | undefined) => Promise<void>) => {
    let last: Position | undefined;
    for (const sample of await deps.samples.ids(projectId, category)) {
      const position = await deleteSample(deps, sample.id, { actor, correlationId: requestId, now: new Date() });
      if (position !== undefined) last = position;
    }
    await settle(last);
  };

  return [
    operation({
      operationId: 'listSamples',
      method: 'get',
      path: '/api/:projectId/raw-data',
      summary: "A project's samples, newest first, with the listing filters",
      auth: 'any',
      query: ListQuery,
      keepAnswer: keepUnlessAsOf,
      async handler({ query, project }) {
        const filters = filtersOf(query);
        const limit = Math.min(query.limit ?? 20, 1000);
        const { samples: queries } = query.asOf !== undefined ? (await asOf(deps, project.id, query.asOf)).deps : deps;
        const [samples, totalCount] = await Promise.all([
          queries.list(project.id, filters, { limit, offset: query.offset ?? 0 }),
          queries.count(project.id, filters),
        ]);
        return { samples: samples.map((s) => sampleView(s, { excludeSensors: query.excludeSensors ?? false })), totalCount };
      },
    }),
    operation({
      operationId: 'countSamples',
      method: 'get',
      path: '/api/:projectId/raw-data/count',
      summary: 'How many samples match the listing filters',
      auth: 'any',
      query: CountQuery,
      keepAnswer: keepUnlessAsOf,
      async handler({ query, project }) {
        const { samples: queries } = query.asOf !== undefined ? (await asOf(deps, project.id, query.asOf)).deps : deps;
        return { count: await queries.count(project.id, filtersOf(query)) };
      },
    }),
    operation({
      operationId: 'deleteAllSamples',
      method: 'post',
      path: '/api/:projectId/raw-data/delete-all',
      summary: "Delete every sample of the project's data sets",
      auth: 'any',
      async handler({ principal, params, requestId, settle, project }) {
        await deleteAll(project.id, 'all', actorOf(principal), requestId, settle);
        return {};
      },
    }),
    operation({
      operationId: 'deleteAllSamplesByCategory',
      method: 'post',
      path: '/api/:projectId/raw-data/delete-all/:category',
      summary: 'Delete every sample of one category',
      auth: 'any',
      async handler({ principal, params, requestId, settle, project }) {
        const category = Category.exclude(['all']).safeParse(params.category);
        if (!category.success) throw new ValidationError(`Invalid category "${params.category}": training, testing, validation or post-processing`);
        await deleteAll(project.id, category.data, actorOf(principal), requestId, settle);
        return {};
      },
    }),
    operation({
      operationId: 'getSample',
      method: 'get',
      path: '/api/:projectId/raw-data/:sampleId',
      summary: 'A sample with its payload values',
      auth: 'any',
      query: z.object({
        limitPayloadValues: queryInteger.optional(),
        cacheKey: z.string().optional(),
        impulseId: queryInteger.optional(),
        proposedActionsJobId: queryInteger.optional(),
        truncateStructuredLabels: queryBoolean.optional(),
      }),
      async handler({ principal, params, query, project }) {
        const sample = await deps.samples.byId(project.id, intParam(params, 'sampleId'));
        if (!sample) throw new NotFoundError(`Sample ${params.sampleId} not found in project ${project.id}`, 'SAMPLE_NOT_FOUND');
        return sampleWithPayload(deps, sample, query.limitPayloadValues);
      },
    }),
    operation({
      operationId: 'deleteSample',
      method: 'delete',
      path: '/api/:projectId/raw-data/:sampleId',
      summary: 'Delete a sample',
      auth: 'any',
      async handler({ principal, params, requestId, settle, project }) {
        const sample = await deps.samples.byId(project.id, intParam(params, 'sampleId'));
        if (!sample) throw new NotFoundError(`Sample ${params.sampleId} not found in project ${project.id}`, 'SAMPLE_NOT_FOUND');
        const position = await deleteSample(deps, sample.id, requestContext(principal, requestId));
        await settle(position);
        return {};
      },
    }),
  ];
}
