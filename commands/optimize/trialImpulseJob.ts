// The job of JobsApi.setTunerPrimaryJob: a completed trial's impulse added to the project as a new
// impulse, with the impulse commands a client would send (create, blocks, DSP config, keras settings),
// then recorded on the run (TunerTrialImpulseAdded) so the tuner state links the trial to it. The
// request checked everything it could and allocated the impulse id, so a retried job (its worker lost)
// finishes the same impulse instead of making a second. A step refused midway deletes the impulse it
// made: the project is left as it was, and the job fails with the refusal.
// The trial's trained model (its blob, `modelSha256` on the trial) is not recorded as the new learn
// block's model yet: the impulse is untrained until its features are generated and it is trained.
import type { ImpulseQueries } from '../../projections/impulses/impulseQueries';
import type { TunerRunQueries } from '../../projections/tunerRuns/tunerRunQueries';
import { trialImpulseOf } from '../../projections/tunerRuns/tunerRunDocument';
import { tunerRunDecider } from '../../domain/optimize/tunerRunDecider';
import { tunerRunStream } from '../../domain/optimize/tunerRunEvents';
import { trialImpulseBlocks, trialKerasSettings } from '../../domain/optimize/trialImpulse';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { systemContext } from '../commandContext';
import { dspRunCheckerOn } from '../dsp/dspRunCheck';
import { handleCommand } from '../handleCommand';
import { IdAllocator } from '../idAllocator';
import { createEmptyImpulse, deleteImpulse, issueBlockId, saveImpulse, setDspConfig } from '../impulses/impulseCommands';
import type { JobRunContext, JobRunner } from '../jobs/jobRunners';
import { setKerasSettings } from '../training/kerasCommands';

export const TUNER_TRIAL_IMPULSE_JOB = 'tuner-trial-impulse';

export interface TrialImpulseJobParameters {
  coordinatorJobId: number;
  trial: number;
  /** Allocated with the request. */
  impulseId: number;
  /** The project's impulse whose input block (axes, frequency) the new impulse takes. */
  templateImpulseId: number;
  name: string;
  maxImpulses: number;
}

export function trialImpulseJobRunner(deps: { events: EventStore; impulses: ImpulseQueries; tunerRuns: TunerRunQueries }): JobRunner {
  const { impulses, tunerRuns } = deps;
  const ids = new IdAllocator(deps.events);
  return async (job: JobRunContext) => {
    const projectId = job.projectId;
    if (projectId === null) throw new Error('Adding a tuner trial to a project is a job of that project');
    const p = job.parameters as unknown as TrialImpulseJobParameters;
    const ctx = systemContext(TUNER_TRIAL_IMPULSE_JOB);
    const trial = await tunerRuns.trial(projectId, p.coordinatorJobId, p.trial);
    if (!trial?.impulse || trial.status !== 'completed') throw new Error(`Trial ${p.coordinatorJobId}-${p.trial} is not a completed trial of this project`);
    const template = await impulses.byId(projectId, p.templateImpulseId);
    if (!template) throw new Error(`Impulse ${p.templateImpulseId}, whose input the trial's impulse takes, was deleted; add the trial again`);
    const impulse = trialImpulseOf(trial.impulse);

    if (!(await impulses.byId(projectId, p.impulseId))) await createEmptyImpulse({ events: deps.events, ids }, { projectId, impulseType: 'default', maxImpulses: p.maxImpulses, impulseId: p.impulseId }, ctx);
    try {
      const blockId = async () => (await issueBlockId(deps.events, projectId, ctx)).blockId;
      const blockIds = { input: await blockId(), dsp: await blockId(), learn: await blockId() };
      await saveImpulse({ events: deps.events, ids }, { projectId, impulseId: p.impulseId, name: p.name, blocks: trialImpulseBlocks(template, impulse, blockIds), maxImpulses: p.maxImpulses }, ctx);
      job.signal.throwIfAborted();
      await setDspConfig({ events: deps.events, runDspCheck: dspRunCheckerOn(job.pool) }, { projectId, dspId: blockIds.dsp, changes: impulse.dsp.config }, ctx);
      await setKerasSettings(deps.events, projectId, blockIds.learn, trialKerasSettings(impulse, trial.round), ctx);
      await handleCommand(deps.events, tunerRunStream(projectId, p.coordinatorJobId), tunerRunDecider, { type: 'RecordTrialImpulse', data: { projectId, coordinatorJobId: p.coordinatorJobId, trial: p.trial, impulseId: p.impulseId, jobId: job.jobId, now: ctx.now } }, ctx);
      job.log(`Trial ${p.coordinatorJobId}-${p.trial} is impulse ${p.impulseId} ("${p.name}"): input ${blockIds.input}, ${impulse.dsp.type} block ${blockIds.dsp}, ${impulse.learn.type} block ${blockIds.learn}`);
    } catch (error) {
      await deleteImpulse(deps.events, { projectId, impulseId: p.impulseId }, ctx).catch(() => undefined);
      throw error;
    }
  };
}
