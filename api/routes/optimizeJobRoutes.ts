// Starting a tuner run (JobsApi.optimizeJob): every check runs before any job exists
// (domain/optimize/tunerRunRequest.ts), so a refused request answers 400 naming the problem and
// leaves the jobs list as it was. The coordinator job then searches what was checked: its parameters
// hold the config and the space.
import { z } from 'zod';
import { TUNER_COORDINATOR, type TunerCoordinatorParameters } from '../../commands/optimize/tunerCoordinator';
import { readRunLineage } from '../../commands/optimize/tunerLineage';
import { DEFAULT_KERAS_SETTINGS } from '../../domain/learn/kerasSettings';
import type { ImpulseForSpace } from '../../domain/optimize/impulseSpace';
import { DEFAULT_OPTIMIZE_SETTINGS } from '../../domain/optimize/optimizeConfig';
import { checkTunerRunRequest, type TunerRunRequestFacts } from '../../domain/optimize/tunerRunRequest';
import type { Project } from '../../projections/projects/projectQueries';
import type { ApiDeps } from '../apiDeps';
import { requestContext } from '../auth/principal';
import { operation, queryInteger, type Operation } from '../http/operation';
import { requestProjectJob } from './projectJobRequest';
import { selectedImpulseId } from './selectedImpulse';

/** The coordinator jobs' category, as the jobs list shows it (and counts runs by). */
const TUNER_CATEGORY = 'EON tuner';

const OptimizeJobQuery = z.object({ extendedFromJobId: queryInteger.refine((n) => n >= 1, 'expected a job id').optional() });

export function optimizeJobOperations(deps: ApiDeps): Operation[] {
  /** The project's selected impulse as the tuner sees it: its input, its DSP block and saved config, its keras block's settings. */
  const impulseFacts = async (project: Project): Promise<TunerRunRequestFacts['impulse']> => {
    const impulse = await deps.impulses.byId(project.id, await selectedImpulseId(deps.impulses, project, undefined));
    const input = impulse?.inputBlocks[0];
    if (!impulse || !input) return null;
    const dsp = impulse.dspBlocks[0];
    const keras = impulse.learnBlocks.find((b) => b.type === 'keras' || b.type === 'keras-regression');
    let forSpace: ImpulseForSpace | null = null;
    if (dsp && keras && input.windowSizeMs !== undefined && input.windowIncreaseMs !== undefined) {
      const settings = (await deps.kerasModels.byLearnBlock(project.id, keras.id))?.settings ?? DEFAULT_KERAS_SETTINGS;
      forSpace = {
        input: { windowSizeMs: input.windowSizeMs, windowIncreaseMs: input.windowIncreaseMs, ...(input.frequencyHz === undefined ? {} : { frequencyHz: input.frequencyHz }) },
        dsp: { type: dsp.type, config: impulse.dspConfigs[String(dsp.id)] ?? null },
        learn: { type: keras.type as 'keras' | 'keras-regression', settings },
      };
    }
    return { inputType: input.type, ...(input.frequencyHz === undefined ? {} : { frequencyHz: input.frequencyHz }), learnTypes: impulse.learnBlocks.map((b) => b.type), forSpace };
  };

  return [
    operation({
      operationId: 'optimizeJob',
      method: 'post',
      path: '/api/:projectId/jobs/optimize',
      summary: 'Start a tuner run (extendedFromJobId: continue that run\'s search with new trials)',
      auth: 'any',
      query: OptimizeJobQuery,
      async handler({ project, query, principal, requestId, settle }) {
        const config = (await deps.optimizeConfigs.forProject(project.id))?.config ?? DEFAULT_OPTIMIZE_SETTINGS;
        const extendedFromJobId = query.extendedFromJobId ?? null;
        const search = checkTunerRunRequest({
          config,
          trainingLabels: Object.entries(project.data.training.labels).filter(([, n]) => n > 0).map(([label]) => label),
          impulse: await impulseFacts(project),
          ...(extendedFromJobId === null ? {} : { extended: { jobId: extendedFromJobId, lineage: await readRunLineage(deps.events, project.id, extendedFromJobId) } }),
        });
        const index = (await deps.jobs.list({ projectId: project.id }, { category: TUNER_CATEGORY, limit: 1 })).total + 1;
        const parameters: TunerCoordinatorParameters = { index, name: config.name ?? `Run ${index}`, config, ...search, extendedFromJobId };
        const id = await requestProjectJob(
          { events: deps.events, ids: deps.ids, projects: deps.projects },
          { principal, settle },
          { projectId: project.id, category: TUNER_CATEGORY, categoryKey: TUNER_COORDINATOR, key: String(index), parameters: { ...parameters }, notificationList: 'train' },
          requestContext(principal, requestId),
        );
        return { id };
      },
    }),
  ];
}
