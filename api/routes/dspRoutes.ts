import { clearDspBlock, setDspConfig } from '../../commands/impulses/impulseCommands';
import { dspBlockDefinition } from '../../domain/impulse/blockCatalog';
import { dspConfigGroups } from '../../domain/impulse/dspConfig';
import { NotFoundError } from '../../domain/shared/errors';
import type { ApiDeps } from '../apiDeps';
import { requestContext } from '../auth/principal';
import { Admission } from '../http/admission';
import { intParam, operation, queryInteger, type Operation } from '../http/operation';
import { DspConfigRequest } from './impulseSchemas';
import { commonFrequency, DSP_POOL_TASKS, readAllBytes, windowSampleOf } from '../../commands/dsp/generateFeatures';
import { processingBlocks } from '../../domain/dsp/blocks';
import { classList, type DspMetadata } from '../../domain/dsp/dspMetadata';
import { expectedImageWindowCount, expectedWindowCount, sliceRange, timeSeriesWindowing, WindowingError } from '../../domain/dsp/windows';
import { dspRunCheckerOn } from '../../commands/dsp/dspRunCheck';
import { dspTaskBlock, type DspTaskOutcome, type DspWindowResult, type SliceFeatures, type SliceFeaturesInput } from '../../commands/dsp/dspPoolTasks';
import { sampleView } from './rawDataRoutes';
import { DSP_WINDOW_MAX_VALUES, resolveImpulseDsp, type ImpulseDsp } from '../../domain/dsp/impulseDsp';
import type { SampleDocument } from '../../projections/samples/sampleDocument';
import { DspConfigurationError } from '../../domain/dsp/processingBlock';
import { ValidationError } from '../../domain/shared/errors';
import { z } from 'zod';

// The SDK's DspRunRequestWithFeatures: one window's raw values, parameter overrides, graphs when asked.
const DspRunRequest = z.object({
  features: z.array(z.number().finite()).min(1).max(DSP_WINDOW_MAX_VALUES),
  params: z.record(z.string(), z.union([z.string(), z.number().finite(), z.boolean()]).transform(String)).default({}),
  drawGraphs: z.boolean().default(false),
  requestPerformance: z.boolean().default(false),
});

// The SDK's DspRunRequestWithoutFeatures: overrides (null: keep the saved value) and whether to save them.
const SliceRunRequest = z.object({
  params: z.record(z.string(), z.union([z.string(), z.number().finite(), z.boolean(), z.null()])).default({}),
  store: z.boolean().default(false),
});
const SliceQuery = z.object({ sliceStart: queryInteger, sliceEnd: queryInteger.optional() });

const overridesOf = (params: Record<string, string | number | boolean | null>): Record<string, string> =>
  Object.fromEntries(Object.entries(params).flatMap(([k, v]) => (v === null ? [] : [[k, String(v)]])));

/**
 * What the slice task needs besides the sample's bytes, once the sample's kind fits the impulse's
 * input and the slice is one window of it; throws DspConfigurationError or WindowingError naming
 * the problem.
 */
function sliceInput(dsp: ImpulseDsp, sample: SampleDocument, query: z.infer<typeof SliceQuery>): Omit<SliceFeaturesInput, 'bytes'> {
  const common = { dsp: dspTaskBlock(dsp), sample: windowSampleOf(sample), contentType: sample.contentType };
  if (dsp.inputBlock.type === 'image') {
    if (sample.kind !== 'image') throw new DspConfigurationError(`sample ${sample.id} is ${sample.kind === 'video' ? 'a video' : 'a time series'}; the impulse's input block reads images`);
    // An image is one window, the whole image: the only slice of it is the one from 0.
    if (query.sliceStart !== 0) throw new DspConfigurationError(`"sliceStart": an image sample is one window, the whole image; its slice starts at 0, not ${query.sliceStart}`);
    return common;
  }
  if (sample.kind === 'image' || sample.kind === 'video') throw new DspConfigurationError(`sample ${sample.id} is a${sample.kind === 'image' ? 'n image' : ' video'}; the impulse's input block reads time series`);
  const windowing = timeSeriesWindowing(dsp.inputBlock, dsp.frequencyHz);
  return { ...common, timeSeries: { windowing, slice: sliceRange(sample, windowing, query.sliceStart, query.sliceEnd) } };
}

/** Slices waiting for a place in the DSP pool; more at once are refused (503) rather than queued. */
const MAX_WAITING_SLICES = 16;

export function dspOperations(deps: ApiDeps): Operation[] {
  const sliceAdmission = new Admission(deps.dspPool.size, MAX_WAITING_SLICES, 'DSP slice runs');
  const commandDeps = { events: deps.events, runDspCheck: dspRunCheckerOn(deps.dspPool) };
  const featureLabelsOf = async (metadataSha: string): Promise<string[]> => {
    const chunks: Buffer[] = [];
    for await (const chunk of await deps.blobs.open(metadataSha)) chunks.push(chunk as Buffer);
    return (JSON.parse(Buffer.concat(chunks).toString('utf8')) as DspMetadata).featureLabels;
  };
  /**
   * The slice run endpoints: one window of a stored sample through the job's windowing and block path.
   * Everything checkable before the work (block, sample, slice) is checked here: 404 for an unknown
   * block or sample, 400 naming the problem otherwise.
   */
  const runSlice = async (params: Record<string, string>, query: z.infer<typeof SliceQuery>, overrides: Record<string, string>) => {
    const projectId = intParam(params, 'projectId');
    const dspId = intParam(params, 'dspId');
    const sampleId = intParam(params, 'sampleId');
    const impulse = await deps.impulses.withDspBlock(projectId, dspId);
    if (!impulse) throw new NotFoundError(`DSP block ${dspId} not found in this project's impulses`, 'DSP_BLOCK_NOT_FOUND');
    const sample = await deps.samples.byId(projectId, sampleId);
    if (!sample) throw new NotFoundError(`Sample ${sampleId} not found in project ${projectId}`, 'SAMPLE_NOT_FOUND');
    let prepared: Omit<SliceFeaturesInput, 'bytes'>;
    try {
      const inputBlock = impulse.inputBlocks.find((b) => b.id === impulse.dspBlocks.find((d) => d.id === dspId)?.input);
      // Without an input block frequency the job takes the samples' most common one; so does a slice.
      const defaultFrequency = inputBlock?.type === 'time-series' && inputBlock.frequencyHz === undefined
        ? commonFrequency([...(await deps.samples.ids(projectId, 'training')), ...(await deps.samples.ids(projectId, 'testing'))])
        : undefined;
      prepared = sliceInput(resolveImpulseDsp(impulse, dspId, overrides, defaultFrequency), sample, query);
    } catch (error) {
      if (error instanceof DspConfigurationError || error instanceof WindowingError) throw new ValidationError(error.message, 'DSP_CONFIGURATION');
      throw error;
    }
    // The sample is read only once the pool can take it: queued slices hold no bytes (admission.ts).
    const outcome = await sliceAdmission.run(async () => {
      const bytes = await readAllBytes(await deps.blobs.open(sample.sha256));
      const input: SliceFeaturesInput = { ...prepared, bytes };
      // Moved to the thread, not copied: the request holds no bytes while the slice runs.
      return deps.dspPool.run<DspTaskOutcome<SliceFeatures>>({ module: DSP_POOL_TASKS, name: 'sliceFeatures', input, transfer: [bytes.buffer as ArrayBuffer] });
    });
    if (!outcome.ok) throw new ValidationError(outcome.refusal, 'DSP_CONFIGURATION');
    const r = outcome.value;
    const axes = prepared.dsp.dspBlock.axes;
    return {
      features: r.features,
      graphs: r.graphs,
      labels: r.labels,
      ...(r.label === null ? {} : { labelForWindow: r.label }),
      ...(r.labelAtEnd === null ? {} : { labelAtEndOfWindow: r.labelAtEnd }),
      sample: {
        sample: sampleView(sample),
        payload: {
          device_name: sample.deviceName ?? undefined,
          device_type: sample.deviceType ?? '',
          // Only the axes the block reads, in its order (as the SDK documents the slice).
          sensors: prepared.timeSeries ? axes.map((name) => ({ index: sample.sensors.findIndex((s) => s.name === name), name, units: sample.sensors.find((s) => s.name === name)?.units ?? '' })) : [],
          values: r.rows,
          ...(prepared.timeSeries ? { cropStart: prepared.timeSeries.slice.start, cropEnd: prepared.timeSeries.slice.end } : {}),
          intervalMs: sample.intervalMs,
          frequencyHz: sample.frequency,
        },
        totalPayloadLength: sample.valuesCount,
      },
      // No on-device performance model (as for dsp/{dspId}/run).
      canProfilePerformance: false,
    };
  };
  return [
    operation({
      operationId: 'runDspSampleSlice',
      method: 'post',
      path: '/api/:projectId/dsp/:dspId/raw-data/:sampleId/slice/run',
      summary: 'Run the DSP block on one window of a stored sample (the job\'s windowing and block path); `store` saves the overrides',
      auth: 'any',
      body: SliceRunRequest,
      query: SliceQuery,
      async handler({ principal, params, query, body, requestId, settle }) {
        const overrides = overridesOf(body.params);
        const result = await runSlice(params, query, overrides);
        if (body.store && Object.keys(overrides).length > 0) {
          const position = await setDspConfig(
            commandDeps,
            { projectId: intParam(params, 'projectId'), dspId: intParam(params, 'dspId'), changes: overrides },
            requestContext(principal, requestId),
          );
          await settle(position);
        }
        return result;
      },
    }),
    operation({
      operationId: 'runDspSampleSliceReadOnly',
      method: 'get',
      path: '/api/:projectId/dsp/:dspId/raw-data/:sampleId/slice/run/readonly',
      summary: 'Run the DSP block with its saved config on one window of a stored sample, changing nothing',
      auth: 'any',
      query: SliceQuery,
      async handler({ params, query }) {
        return runSlice(params, query, {});
      },
    }),
    operation({
      operationId: 'getDspConfig',
      method: 'get',
      path: '/api/:projectId/dsp/:dspId',
      summary: "A DSP block's information and its config, each parameter with its current value",
      auth: 'any',
      async handler({ params }) {
        const projectId = intParam(params, 'projectId');
        const dspId = intParam(params, 'dspId');
        const impulse = await deps.impulses.withDspBlock(projectId, dspId);
        const block = impulse?.dspBlocks.find((b) => b.id === dspId);
        const def = block && dspBlockDefinition(block.type);
        if (!impulse || !block || !def) throw new NotFoundError(`DSP block ${dspId} not found in this project's impulses`, 'DSP_BLOCK_NOT_FOUND');
        const input = impulse.inputBlocks.find((b) => b.id === block.input);
        const saved = impulse.dspConfigs[String(dspId)] ?? null;
        const generated = await deps.dspFeatures.current(projectId, dspId);
        const samples = [...(await deps.samples.ids(projectId, 'training')), ...(await deps.samples.ids(projectId, 'testing'))];
        const classes = classList(samples.map((s) => ({ label: s.label, structuredLabels: s.structuredLabels ?? [] })));
        let expected = 0;
        if (input?.type === 'time-series') {
          try {
            expected = expectedWindowCount(samples.filter((s) => s.kind !== 'image' && s.kind !== 'video'), timeSeriesWindowing(input, commonFrequency(samples)));
          } catch (error) {
            // An input block without a usable window (no frequency and no samples) expects none.
            if (!(error instanceof WindowingError)) throw error;
          }
        } else if (input?.type === 'image') expected = expectedImageWindowCount(samples);
        return {
          dsp: {
            id: block.id,
            name: block.name,
            windowLength: input?.windowSizeMs ?? 0,
            type: block.type,
            classes,
            features: generated
              ? { generated: true, count: generated.featureCount, labels: await featureLabelsOf(generated.metadata), classes: generated.classes }
              : { generated: false },
            expectedWindowCount: expected,
            inputAxes: block.axes,
            canCalculateFeatureImportance: def.canCalculateFeatureImportance,
            canNormalizeData: processingBlocks.get(block.type)?.canNormalizeData ?? false,
            normalizeData: generated?.parameters.normalizeData ?? 'none',
            calculateFeatureImportance: generated?.parameters.calculateFeatureImportance ?? false,
            hasAutoTune: def.hasAutoTune,
            ...(def.minimumVersionForAutotune === undefined ? {} : { minimumVersionForAutotune: def.minimumVersionForAutotune }),
            hasAutotunerResults: false,
            usesState: false,
          },
          config: dspConfigGroups(def, { implementationVersion: block.implementationVersion }, saved),
        };
      },
    }),
    operation({
      operationId: 'setDspConfig',
      method: 'post',
      path: '/api/:projectId/dsp/:dspId',
      summary: "Set a DSP block's parameters: only the keys present are overwritten",
      auth: 'any',
      body: DspConfigRequest,
      async handler({ principal, params, body, requestId, settle }) {
        const position = await setDspConfig(
          commandDeps,
          { projectId: intParam(params, 'projectId'), dspId: intParam(params, 'dspId'), changes: body.config },
          requestContext(principal, requestId),
        );
        await settle(position);
        return {};
      },
    }),
    operation({
      operationId: 'runDspOnFeaturesArray',
      method: 'post',
      path: '/api/:projectId/dsp/:dspId/run',
      summary: "Run the DSP block on one window of raw values, with the saved config and any overrides (the job's code path)",
      auth: 'any',
      body: DspRunRequest,
      async handler({ params, body }) {
        const projectId = intParam(params, 'projectId');
        const dspId = intParam(params, 'dspId');
        const impulse = await deps.impulses.withDspBlock(projectId, dspId);
        if (!impulse) throw new NotFoundError(`DSP block ${dspId} not found in this project's impulses`, 'DSP_BLOCK_NOT_FOUND');
        let dsp;
        try {
          dsp = resolveImpulseDsp(impulse, dspId, body.params);
        } catch (error) {
          if (error instanceof DspConfigurationError) throw new ValidationError(error.message, 'DSP_CONFIGURATION');
          throw error;
        }
        const outcome = await deps.dspPool.run<DspTaskOutcome<DspWindowResult>>({
          module: DSP_POOL_TASKS,
          name: 'runDspWindow',
          input: { dsp: dspTaskBlock(dsp), values: body.features, drawGraphs: body.drawGraphs },
        });
        if (!outcome.ok) throw new ValidationError(outcome.refusal, 'DSP_CONFIGURATION');
        const { features, graphs, labels } = outcome.value;
        // No `performance`: that is an on-device latency/RAM estimate this service does not model,
        // and the SDK marks it optional.
        return { features, graphs, labels };
      },
    }),
    operation({
      operationId: 'clearDspBlock',
      method: 'post',
      path: '/api/:projectId/dsp/:dspId/clear',
      summary: "Drop a DSP block's saved config and generated features",
      auth: 'any',
      async handler({ principal, params, requestId, settle }) {
        const position = await clearDspBlock(
          deps.events,
          { projectId: intParam(params, 'projectId'), dspId: intParam(params, 'dspId') },
          requestContext(principal, requestId),
        );
        await settle(position);
        return {};
      },
    }),
  ];
}
