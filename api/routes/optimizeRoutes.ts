// The tuner's config (OptimizationApi.getConfig/updateConfig). The config is an event on the
// project's own stream (domain/optimize); a space is checked against the project's impulse (its
// selected default) when it is saved, so a refused save changes nothing and names the choice.
import { z } from 'zod';
import { setOptimizeConfig } from '../../commands/optimize/optimizeCommands';
import { renameTunerRun } from '../../commands/optimize/tunerRunCommands';
import { NotFoundError } from '../../domain/shared/errors';
import type { TunerRunDocument } from '../../projections/tunerRuns/tunerRunDocument';
import { DEFAULT_OPTIMIZE_SETTINGS } from '../../domain/optimize/optimizeConfig';
import type { TunerProjectContext } from '../../domain/optimize/tunerSpaceInput';
import { LATENCY_DEVICES } from '../../domain/learn/kerasPerformance';
import type { Project } from '../../projections/projects/projectQueries';
import type { ApiDeps } from '../apiDeps';
import { requestContext } from '../auth/principal';
import { intParam, operation, type Operation } from '../http/operation';
import { optimizeConfigView } from '../views/optimizeConfigView';
import { tunerSpaceView } from '../views/tunerSpaceView';
import { tunerStateView } from '../views/tunerStateView';
import { selectedImpulseId } from './selectedImpulse';

const number = z.number();

/**
 * The SDK's OptimizeConfig. The fields this service acts on are checked by the decider, which names
 * the field; the others (objectives, SEM, early stopping, MOMF...) are accepted and have no effect,
 * as a client sends the whole config with every save.
 */
const OptimizeConfigBody = z.object({
  name: z.string().optional(),
  targetLatency: number,
  targetDevice: z.object({ name: z.string(), ram: number.optional(), rom: number.optional() }),
  trainingCycles: number.optional(),
  tuningMaxTrials: number.optional(),
  tuningWorkers: number.optional(),
  tuningAlgorithm: z.string().max(64).optional(),
  space: z
    .array(z.object({ parameters: z.object({}).passthrough().optional(), inputBlocks: z.array(z.unknown()), dspBlocks: z.array(z.unknown()), learnBlocks: z.array(z.array(z.unknown())) }))
    .optional(),
});

const JOB_STATUS = { running: 'running', completed: 'success', failed: 'failed', cancelled: 'cancelled' } as const;

/** The SDK's TunerRun: the coordinator job is the run's job (there is no separate tuner job). */
export const tunerRunView = (run: TunerRunDocument) => ({
  tunerJobId: run.coordinatorJobId,
  tunerCoordinatorJobId: run.coordinatorJobId,
  index: run.index,
  name: run.name,
  created: run.created,
  jobStatus: JOB_STATUS[run.jobStatus],
  ...(run.extendedFromJobId === null ? {} : { continuationJobId: run.extendedFromJobId }),
  space: tunerSpaceView(run.space),
  visible: true,
});

export function optimizeOperations(deps: ApiDeps): Operation[] {
  /** What a space is checked against: the project's selected impulse (its first input block and its learn blocks). */
  const projectContext = async (project: Project): Promise<TunerProjectContext> => {
    const impulse = await deps.impulses.byId(project.id, await selectedImpulseId(deps.impulses, project, undefined));
    const input = impulse?.inputBlocks[0];
    return {
      latencyDevices: LATENCY_DEVICES,
      impulse: impulse && input ? { inputType: input.type, ...(input.frequencyHz === undefined ? {} : { frequencyHz: input.frequencyHz }), learnTypes: impulse.learnBlocks.map((b) => b.type) } : null,
    };
  };

  /** The state of `run` (null: the project has none yet), in the SDK's OptimizeStateResponse. */
  const stateOf = async (project: Project, run: TunerRunDocument | null) => {
    const [runs, trials, saved, impulse] = await Promise.all([
      deps.tunerRuns.forProject(project.id),
      run ? deps.tunerRuns.trials(project.id, run.coordinatorJobId) : Promise.resolve([]),
      run ? Promise.resolve(null) : deps.optimizeConfigs.forProject(project.id),
      run ? Promise.resolve(null) : selectedImpulseId(deps.impulses, project, undefined).then((id) => deps.impulses.byId(project.id, id)),
    ]);
    return tunerStateView({
      run: run ? { doc: run, trials } : null,
      runs,
      savedConfig: saved?.config ?? null,
      impulseDspTypes: impulse?.dspBlocks.map((b) => b.type) ?? [],
      isWhitelabel: project.whitelabelId !== undefined && project.whitelabelId !== null,
      publicUrl: deps.settings.publicUrl,
    });
  };
  const runOf = async (project: Project, params: Record<string, string>): Promise<TunerRunDocument> => {
    const coordinatorJobId = intParam(params, 'tunerCoordinatorJobId');
    const run = await deps.tunerRuns.byCoordinator(project.id, coordinatorJobId);
    if (!run) throw new NotFoundError(`No tuner run ${coordinatorJobId} in this project`, 'TUNER_RUN_NOT_FOUND');
    return run;
  };

  return [
    operation({
      operationId: 'getState',
      method: 'get',
      path: '/api/:projectId/optimize/state',
      summary: "The state of the project's latest tuner run: its config, trials and their progress (the saved config and no trials before the first run)",
      auth: 'any',
      async handler({ project }) {
        return stateOf(project, await deps.tunerRuns.latest(project.id));
      },
    }),
    operation({
      operationId: 'getTunerRunState',
      method: 'get',
      path: '/api/:projectId/optimize/:tunerCoordinatorJobId/state',
      summary: 'The state of a tuner run: its config, trials and their progress',
      auth: 'any',
      async handler({ project, params }) {
        return stateOf(project, await runOf(project, params));
      },
    }),
    operation({
      operationId: 'getConfig',
      method: 'get',
      path: '/api/:projectId/optimize/config',
      summary: 'The tuner config of the project (the defaults until one is saved)',
      auth: 'any',
      async handler({ project }) {
        const doc = await deps.optimizeConfigs.forProject(project.id);
        return optimizeConfigView(doc?.config ?? DEFAULT_OPTIMIZE_SETTINGS);
      },
    }),
    operation({
      operationId: 'listTunerRuns',
      method: 'get',
      path: '/api/:projectId/optimize/runs',
      summary: 'The tuner runs of the project, oldest first',
      auth: 'any',
      async handler({ project }) {
        return { runs: (await deps.tunerRuns.forProject(project.id)).map(tunerRunView) };
      },
    }),
    operation({
      operationId: 'updateConfig',
      method: 'post',
      path: '/api/:projectId/optimize/config',
      summary: 'Save the tuner config: target device, latency, trials, workers, training cycles, algorithm, search space',
      auth: 'any',
      body: OptimizeConfigBody,
      async handler({ project, body, principal, requestId, settle }) {
        const position = await setOptimizeConfig(deps.events, project.id, body, await projectContext(project), requestContext(principal, requestId));
        await settle(position);
        return {};
      },
    }),
    // After optimize/config: a path parameter would match it too.
    operation({
      operationId: 'updateTunerRun',
      method: 'post',
      path: '/api/:projectId/optimize/:tunerCoordinatorJobId',
      summary: 'Rename a tuner run',
      auth: 'any',
      body: z.object({ name: z.string().optional() }),
      async handler({ params, project, body, principal, requestId, settle }) {
        const { coordinatorJobId } = await runOf(project, params);
        if (body.name !== undefined) await settle(await renameTunerRun(deps.events, project.id, coordinatorJobId, body.name, requestContext(principal, requestId)));
        return {};
      },
    }),
  ];
}
