import type { Middleware } from 'koa';
import type { Logger } from 'pino';

/** One line per request. Headers and bodies are never logged: they carry keys and passwords. */
export function accessLog(log: Logger): Middleware {
  return async (ctx, next) => {
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      log.info({ requestId: ctx.state.requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10 }, 'request');
    }
  };
}
