// What a process that serves (api or ingestion) without the projections role does instead (ROLES
// split): it reads the read models another process keeps. At its start it waits until that process
// has brought them up to the log (service/sharedReadModelsCatchUp.ts); from then on it watches them for
// standing still behind the log (service/sharedReadModelsWatch.ts), which its health reports.
import type { Logger } from 'pino';
import { allProjections } from '../../projections';
import type { ReadModelsStall } from '../../projections/projectionStatus';
import { reportCatchUp, type CatchUp, type CatchUpProgress } from '../catchUpProgress';
import type { Stores } from '../composition';
import { SharedReadModelsCatchUp } from '../sharedReadModelsCatchUp';
import { SharedReadModelsWatch, type WatchOptions } from '../sharedReadModelsWatch';

export interface SharedReadModelsFollower {
  /** Whether the read models stand still behind the log, as of the watch's last look. */
  stall(): ReadModelsStall | undefined;
  /** Undefined until the catch-up has begun. */
  progress(): CatchUpProgress | undefined;
  /** Resolves once the read models have reached the log's head as it is now, or `signal` is aborted. */
  /** `quiet`: no progress lines (a thread of this process catching the read models up logs its own). */
  catchUp(signal?: AbortSignal, quiet?: boolean): Promise<void>;
  /** Starts the watch (after the catch-up). */
  watch(): void;
  stop(): Promise<void>;
}

export function followSharedReadModels(deps: { stores: Stores; log: Logger; watchOptions?: WatchOptions }): SharedReadModelsFollower {
  const { stores, log } = deps;
  const names = allProjections.map((p) => p.name);
  const watch = new SharedReadModelsWatch(stores.events, stores.readStore, names, log, deps.watchOptions);
  let watching: SharedReadModelsWatch | undefined;
  let reporting: CatchUp | undefined;
  return {
    stall: () => watch.stall(),
    progress: () => reporting?.progress(),
    async catchUp(signal, quiet = false) {
      const head = await stores.events.headPosition();
      if (head === undefined) return;
      const shared = new SharedReadModelsCatchUp(stores.readStore, names, log);
      reporting = reportCatchUp(shared, head, quiet ? log.child({}, { level: 'silent' }) : log);
      try {
        await shared.reach(head, signal);
      } finally {
        reporting.stop();
      }
    },
    watch() {
      watching = watch.start();
    },
    stop: async () => watching?.stop(),
  };
}
