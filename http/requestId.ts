import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

const VALID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Each request gets an id (a sane incoming `x-request-id` is kept): it becomes the correlation id
 * of the events the request appends and is echoed back so a client can quote it.
 */
export function requestId(): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const id = VALID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = id;
    ctx.set('x-request-id', id);
    await next();
  };
}
