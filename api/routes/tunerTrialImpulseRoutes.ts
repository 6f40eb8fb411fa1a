// JobsApi.setTunerPrimaryJob: a completed tuner trial's impulse added to the project as a new impulse,
// as a job (commands/optimize/trialImpulseJob.ts). Everything the request can know is checked before
// the job is requested (the trial, the impulse its input comes from, room for one more impulse, the
// blocks, the DSP config and the model settings), so a refusal names the problem and starts no job.
import { z } from 'zod';
import { TUNER_TRIAL_IMPULSE_JOB, type TrialImpulseJobParameters } from '../../commands/optimize/trialImpulseJob';
import { IMPULSE_NAME_MAX } from '../../domain/impulse/impulseDecider';
import { buildImpulseBlocks } from '../../domain/impulse/impulseValidation';
import { applyKerasChange, DEFAULT_KERAS_SETTINGS } from '../../domain/learn/kerasSettings';
import { trialProblem } from '../../domain/optimize/searchSpace';
import { templateInput, trialImpulseBlocks, trialKerasSettings } from '../../domain/optimize/trialImpulse';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/shared/errors';
import { checkText } from '../../domain/shared/textRules';
import { trialImpulseOf } from '../../projections/tunerRuns/tunerRunDocument';
import type { ApiDeps } from '../apiDeps';
import { requestContext } from '../auth/principal';
import { operation, type Operation } from '../http/operation';
import { parseTunerTrialKey, tunerTrialName } from '../views/tunerStateView';
import { MAX_IMPULSES_FREE_TIER } from './impulseRoutes';
import { requestProjectJob } from './projectJobRequest';
import { selectedImpulseId } from './selectedImpulse';

export function tunerTrialImpulseOperations(deps: ApiDeps): Operation[] {
  return [
    operation({
      operationId: 'setTunerPrimaryJob',
      method: 'post',
      path: '/api/:projectId/jobs/set-tuner-primary-job',
      summary: "Add a completed tuner trial's impulse to the project as a new impulse (a job): its window, DSP block and config, and model settings, on the input of the project's impulse",
      auth: 'any',
      query: z.object({ trialId: z.string().max(64) }),
      body: z.object({ name: z.string().optional() }),
      async handler({ project, query, body, principal, requestId, settle }) {
        const key = parseTunerTrialKey(query.trialId);
        if (!key) throw new ValidationError(`trialId: "${query.trialId}" is not a trial id ("{tunerCoordinatorJobId}-{trial}", as the tuner state answers it)`, 'INVALID_TRIAL_ID');
        const given = body.name?.trim() ?? '';
        if (given !== '') checkText(given, 'name', { max: IMPULSE_NAME_MAX });
        const trial = await deps.tunerRuns.trial(project.id, key.coordinatorJobId, key.trial);
        if (!trial?.impulse) throw new NotFoundError(`No tuner trial ${query.trialId} in this project`, 'TUNER_TRIAL_NOT_FOUND');
        if (trial.status !== 'completed') throw new ConflictError(`Trial ${query.trialId} is ${trial.status}: only a completed trial's impulse can be added to the project`, 'TRIAL_NOT_COMPLETED');
        const impulse = trialImpulseOf(trial.impulse);

        const templateImpulseId = await selectedImpulseId(deps.impulses, project, undefined);
        const template = await deps.impulses.byId(project.id, templateImpulseId);
        if (!template) throw new ConflictError("This project has no impulse to take the trial's input axes and frequency from", 'NO_IMPULSE');
        const input = templateInput(template);
        const impulses = await deps.impulses.forProject(project.id);
        if (impulses.length >= MAX_IMPULSES_FREE_TIER) {
          throw new ValidationError(`This project already has ${impulses.length} impulses, the most its plan allows (${MAX_IMPULSES_FREE_TIER}); delete one first`, 'TOO_MANY_IMPULSES');
        }
        const problem = trialProblem(impulse, input.frequencyHz);
        if (problem !== undefined) throw new ValidationError(`Trial ${query.trialId} cannot run on this project's input (${input.frequencyHz ?? 'unknown'} Hz): ${problem}`, 'TRIAL_NOT_APPLICABLE');
        // The blocks and settings the job will save, checked now (ids are the job's to take).
        buildImpulseBlocks(trialImpulseBlocks(template, impulse, { input: 1, dsp: 2, learn: 3 }), { usedElsewhere: new Set(), now: new Date() });
        applyKerasChange(DEFAULT_KERAS_SETTINGS, trialKerasSettings(impulse, trial.round));

        const ctx = requestContext(principal, requestId);
        const parameters: TrialImpulseJobParameters = {
          coordinatorJobId: key.coordinatorJobId,
          trial: key.trial,
          impulseId: await deps.ids.next('impulse'),
          templateImpulseId: template.id,
          name: given === '' ? tunerTrialName(trial.trial, impulse) : given,
          maxImpulses: MAX_IMPULSES_FREE_TIER,
        };
        const jobId = await requestProjectJob(
          { events: deps.events, ids: deps.ids, projects: deps.projects },
          { principal, settle },
          { projectId: project.id, category: 'Add tuner trial to project', categoryKey: TUNER_TRIAL_IMPULSE_JOB, key: query.trialId, parameters: { ...parameters }, notificationList: null },
          ctx,
        );
        return { id: jobId };
      },
    }),
  ];
}
