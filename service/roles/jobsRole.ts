// The jobs role: a JobWorker that claims and runs the jobs it has a runner for, on a thread pool of
// its own. Any number of processes may run it on one log (commands/jobs/jobWorker.ts).
import type { Logger } from 'pino';
import { removeStaleFeatureFolders } from '../../commands/dsp/featureScratchFolders';
import type { JobRunner } from '../../commands/jobs/jobRunners';
import { JobWorker } from '../../commands/jobs/jobWorker';
import { ThreadPool } from '../../commands/jobs/threadPool';
import { SagaRunner } from '../../commands/sagas/sagaRunner';
import { JobQueries } from '../../projections/jobs/jobQueries';
import { ProjectQueries } from '../../projections/projects/projectQueries';
import type { Stores } from '../composition';
import type { Config } from '../configuration';

export interface JobsRole {
  readonly worker: JobWorker;
  /** Stops taking jobs, ends the running ones, and closes the pool. */
  stop(): Promise<void>;
}

export async function startJobsRole(deps: {
  stores: Stores;
  config: Config;
  log: Logger;
  /**
   * The runners, by category key (the caller's: production's or a test's). A kind of job none of them
   * runs stays requested, for a worker that can.
   */
  runners: ReadonlyMap<string, JobRunner>;
}): Promise<JobsRole> {
  const { stores, config, runners } = deps;
  const log = deps.log.child({ role: 'jobs' });
  await removeStaleFeatureFolders(log);
  const pool = new ThreadPool();
  const projects = new ProjectQueries(stores.readStore);
  const worker = new JobWorker({ events: stores.events, jobs: new JobQueries(stores.readStore), runners, pool, log, heartbeatMs: config.jobHeartbeatMs, projectDeleted: (id) => projects.isDeleted(id) });
  const runner = new SagaRunner(stores.events, stores.readStore, worker.saga(), log);
  runner.start();
  worker.start();
  return {
    worker,
    async stop() {
      await runner.stop();
      await worker.stop();
      await pool.close();
    },
  };
}
