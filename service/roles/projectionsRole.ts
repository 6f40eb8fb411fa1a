// The projections role: one ProjectionRunner that keeps every read model (projections/) up to the log.
// Made before the ports open (it is the service's projection health); started by `catchUp`, which
// resolves once the read models have caught up with the log, reporting its progress meanwhile.
import type { Logger } from 'pino';
import { allProjections } from '../../projections';
import { ProjectionRunner } from '../../projections/projectionRunner';
import { reportCatchUp, type CatchUp, type CatchUpProgress } from '../catchUpProgress';
import type { Stores } from '../composition';

export interface ProjectionsRole {
  readonly runner: ProjectionRunner;
  /** Undefined until the catch-up has begun. */
  progress(): CatchUpProgress | undefined;
  /**
   * Starts the runner and resolves once it has caught up. Aborting `signal` stops it: the catch-up
   * stops after the batch it is applying, its checkpoint stored, and this resolves.
   */
  catchUp(signal?: AbortSignal): Promise<void>;
  stop(): Promise<void>;
}

export function projectionsRole(deps: { stores: Stores; log: Logger }): ProjectionsRole {
  const { stores } = deps;
  const log = deps.log.child({ role: 'projections' });
  const runner = new ProjectionRunner(stores.events, stores.readStore, allProjections, log);
  let reporting: CatchUp | undefined;
  return {
    runner,
    progress: () => reporting?.progress(),
    async catchUp(signal) {
      // The runner's stop resolves its start.
      const onAbort = () => void runner.stop();
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        reporting = reportCatchUp(runner, await stores.events.headPosition(), log);
        try {
          await runner.start();
        } finally {
          reporting.stop();
        }
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
    },
    stop: () => runner.stop(),
  };
}
