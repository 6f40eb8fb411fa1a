// POST /api/{projectId}/jobs/generate-features (the SDK's JobsApi.generateFeaturesJob). Everything the
// job would otherwise fail on later is checked here, so bad input is a 400 naming the problem and no
// job is requested: no impulse, a DSP block that is not in one, no training data, a DSP config the
// block refuses, or an input block the job does not handle (time-series and image ones are handled).
import { z } from 'zod';
import { checkFeatureInput } from '../../commands/dsp/checkFeatureInput';
import { commonFrequency } from '../../commands/dsp/generateFeatures';
import { dspRunCheckerOn } from '../../commands/dsp/dspRunCheck';
import { NORMALIZE_DATA } from '../../domain/dsp/dspFeaturesEvents';
import { impulseDspRunCheck, resolveImpulseDsp } from '../../domain/dsp/impulseDsp';
import { DspConfigurationError } from '../../domain/dsp/processingBlock';
import { WindowingError } from '../../domain/dsp/windows';
import { ValidationError } from '../../domain/shared/errors';
import type { ApiDeps } from '../apiDeps';
import { requestProjectJob } from './projectJobRequest';
import { requestContext } from '../auth/principal';
import { operation, type Operation } from '../http/operation';

const GenerateFeaturesRequest = z.object({
  dspId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  calculateFeatureImportance: z.boolean().default(false),
  skipFeatureExplorer: z.boolean().default(false),
  normalizeData: z.enum(NORMALIZE_DATA).default('none'),
});

export function generateFeaturesOperations(deps: ApiDeps): Operation[] {
  const runDspCheck = dspRunCheckerOn(deps.dspPool);
  return [
    operation({
      operationId: 'generateFeaturesJob',
      method: 'post',
      path: '/api/:projectId/jobs/generate-features',
      summary: 'Start a job that generates the features of a DSP block for all training and testing data',
      auth: 'any',
      body: GenerateFeaturesRequest,
      async handler({ principal, body, project, requestId, settle }) {
        const projectId = project.id;
        if (!(await deps.impulses.byId(projectId))) throw new ValidationError('This project has no impulse: create one before generating features', 'NO_IMPULSE');
        const impulse = await deps.impulses.withDspBlock(projectId, body.dspId);
        if (!impulse) throw new ValidationError(`"dspId": no DSP block ${body.dspId} in this project's impulses`, 'DSP_BLOCK_NOT_FOUND');
        const samples = await deps.samples.count(projectId, { category: 'training' });
        if (samples === 0) throw new ValidationError('There is no training data: add samples before generating features', 'NO_TRAINING_DATA');
        try {
          // Without the input block's frequency the job takes the samples' most common one: so do
          // the checks here, which include running the block once on a window of the input's size (in
          // the DSP pool: it grows with the window and the parameters).
          const block = impulse.dspBlocks.find((b) => b.id === body.dspId);
          const input = impulse.inputBlocks.find((b) => b.id === block?.input);
          const frequency = input?.type === 'time-series' && input.frequencyHz === undefined
            ? commonFrequency([...(await deps.samples.ids(projectId, 'training')), ...(await deps.samples.ids(projectId, 'testing'))])
            : undefined;
          const dsp = resolveImpulseDsp(impulse, body.dspId, {}, frequency);
          const check = impulseDspRunCheck(dsp);
          const refusals = check === undefined ? [] : await runDspCheck(check);
          if (refusals.length > 0) throw new DspConfigurationError(refusals.join('; '));
          checkFeatureInput(dsp);
        } catch (error) {
          if (error instanceof DspConfigurationError || error instanceof WindowingError) throw new ValidationError(error.message, 'DSP_CONFIGURATION');
          throw error;
        }
        const jobId = await requestProjectJob({ events: deps.events, ids: deps.ids, projects: deps.projects }, { principal, settle }, {
          projectId,
          category: 'Generate features',
          categoryKey: 'generate-features',
          key: String(body.dspId),
          parameters: { ...body },
          notificationList: 'dsp',
        }, requestContext(principal, requestId));
        return { id: jobId };
      },
    }),
  ];
}
