import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { STORAGE_FULL_RETRY_AFTER_SECONDS, storageFullness } from '../stores/storageFull';
import { describeProjectionFailure, describeStall, type ProjectionFailure, type ProjectionHealth } from '../projections/projectionStatus';

/** Which failures make a port's /health 503. */
export interface HealthScope {
  /**
   * The projections whose failure stops this port's work (the ingestion port: API keys and projects,
   * to know an upload's key). Another's failure answers 200 `degraded`, naming it: a load balancer
   * must not take a port out of service for a read model it never reads. Undefined: every projection.
   */
  needs?: ReadonlySet<string>;
}

/**
 * `GET /health`, for operators and load balancers, on both APIs: 200 `{ status: "ok" }` while every
 * projection applies the log; 503 naming each failed projection, the event it is stuck on and the
 * error while any is failing (their read models are stale; writes are still accepted and durable);
 * 503 `stalled` in a process reading another's read models that stand still behind the log
 * (service/sharedReadModelsWatch.ts), with their position and the log's head.
 * 503 `storage-full` while a data folder has no space left or a write failed for want of it
 * (stores/storageFull.ts): writes answer 507 meanwhile, reads are served.
 * Public: it names projections and event positions, never data from the events.
 * While a start catches up, before this route exists, service/startingGate.ts answers in the same
 * shape with 503 and `status: "starting"`.
 */
export function healthRoute(health: ProjectionHealth, log: Logger, scope: HealthScope = {}): Middleware {
  return async (ctx) => {
    ctx.set('cache-control', 'no-store');
    let failures: ProjectionFailure[];
    try {
      failures = await health.failures();
    } catch (error) {
      log.error({ err: error }, 'reading the projections\' status for /health failed');
      ctx.status = 503;
      ctx.body = { success: false, status: 'unknown', error: 'The state of the read models could not be read', failingProjections: [] };
      return;
    }
    // No write can succeed: the port cannot do its work, whatever the read models (reads are still served).
    const full = storageFullness();
    if (full) {
      ctx.status = 503;
      ctx.set('Retry-After', String(STORAGE_FULL_RETRY_AFTER_SECONDS));
      ctx.body = { success: false, status: 'storage-full', error: full, failingProjections: failures };
      return;
    }
    const stall = failures.length === 0 ? health.stall?.() : undefined;
    if (stall) {
      ctx.status = 503;
      ctx.body = {
        success: false,
        status: 'stalled',
        error: describeStall(stall),
        failingProjections: [],
        readModels: { position: stall.position.toString(), head: stall.head.toString(), stalledSeconds: Math.round((Date.now() - stall.since) / 1000) },
      };
      return;
    }
    if (failures.length === 0) {
      ctx.status = 200;
      ctx.body = { success: true, status: 'ok', failingProjections: [] };
      return;
    }
    const { needs } = scope;
    const blocking = needs ? failures.filter((f) => needs.has(f.projection)) : failures;
    if (blocking.length === 0) {
      ctx.status = 200;
      ctx.body = { success: true, status: 'degraded', error: failures.map(describeProjectionFailure).join('; '), failingProjections: failures };
      return;
    }
    ctx.status = 503;
    ctx.body = { success: false, status: 'failing', error: failures.map(describeProjectionFailure).join('; '), failingProjections: failures };
  };
}
