import { clearDspBlock, setDspConfig } from '../../commands/impulses/impulseCommands';
import { dspBlockDefinition } from '../../domain/impulse/blockCatalog';
import { dspConfigGroups } from '../../domain/impulse/dspConfig';
import { NotFoundError } from '../../domain/shared/errors';
import type { ApiDeps } from '../apiDeps';
import { requestContext } from '../auth/principal';
import { intParam, operation, type Operation } from '../http/operation';
import { DspConfigRequest } from './impulseSchemas';
import { commonFrequency } from '../../commands/dsp/generateFeatures';
import { processingBlocks } from '../../domain/dsp/blocks';
import { classList, type DspMetadata } from '../../domain/dsp/dspMetadata';
import { expectedImageWindowCount, expectedWindowCount, timeSeriesWindowing, WindowingError } from '../../domain/dsp/windows';
import { dspTaskBlock, type DspTaskOutcome, type DspWindowResult } from '../../commands/dsp/dspPoolTasks';
import { DSP_WINDOW_MAX_VALUES, resolveImpulseDsp } from '../../domain/dsp/impulseDsp';
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

const DSP_POOL_TASKS = new URL('../../commands/dsp/dspPoolTasks.ts', import.meta.url);

export function dspOperations(deps: ApiDeps): Operation[] {
  const featureLabelsOf = async (metadataSha: string): Promise<string[]> => {
    const chunks: Buffer[] = [];
    for await (const chunk of await deps.blobs.open(metadataSha)) chunks.push(chunk as Buffer);
    return (JSON.parse(Buffer.concat(chunks).toString('utf8')) as DspMetadata).featureLabels;
  };
  return [
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
          deps.events,
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
