import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { describeProjectionFailure, describeStall, type ProjectionFailure, type ProjectionHealth } from '../../projections/projectionStatus';

/**
 * `GET /health`, for operators and load balancers, on both APIs: 200 `{ status: "ok" }` while every
 * projection applies the log; 503 naming each failed projection, the event it is stuck on and the
 * error while any is failing (their read models are stale; writes are still accepted and durable);
 * 503 `stalled` in a process reading another's read models that stand still behind the log
 * (service/sharedReadModelsWatch.ts), with their position and the log's head.
 * Public: it names projections and event positions, never data from the events.
 * While a start catches up, before this route exists, service/startingGate.ts answers in the same
 * shape with 503 and `status: "starting"`.
 */
export function healthRoute(health: ProjectionHealth, log: Logger): Middleware {
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
    ctx.status = 503;
    ctx.body = { success: false, status: 'failing', error: failures.map(describeProjectionFailure).join('; '), failingProjections: failures };
  };
}
