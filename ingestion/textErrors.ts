import type { Middleware } from 'koa';
import { DomainError } from '../domain/shared/errors';
import { noteStorageFailure, STORAGE_FULL_MESSAGE, STORAGE_FULL_RETRY_AFTER_SECONDS } from '../stores/storageFull';
import { isTransientStoreError, RETRY_AFTER_SECONDS } from '../stores/transientErrors';

/**
 * The ingestion API answers in text/plain, as the spec and the device tools expect: the body of a
 * failure explains it; a 5xx never shows internals.
 */
export function textErrors(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.type = 'text/plain';
        ctx.body = `No such endpoint: ${ctx.method} ${ctx.path}`;
      }
    } catch (caught) {
      ctx.type = 'text/plain';
      if (caught instanceof DomainError) {
        ctx.status = caught.status;
        const retryAfter = (caught as { retryAfterSeconds?: unknown }).retryAfterSeconds;
        if (typeof retryAfter === 'number') ctx.set('Retry-After', String(retryAfter));
        ctx.body = caught.message;
        return;
      }
      const status = (caught as { status?: number }).status;
      if (typeof status === 'number' && status >= 400 && status < 500) {
        ctx.status = status;
        ctx.body = (caught as { expose?: boolean }).expose ? (caught as Error).message : 'Bad request';
        return;
      }
      if (noteStorageFailure(caught)) {
        ctx.status = 507;
        ctx.set('Retry-After', String(STORAGE_FULL_RETRY_AFTER_SECONDS));
        ctx.body = `${STORAGE_FULL_MESSAGE}; the sample was not recorded (request id ${String(ctx.state.requestId)})`;
        ctx.app.emit('error', caught, ctx);
        return;
      }
      if (isTransientStoreError(caught)) {
        ctx.status = 503;
        ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
        ctx.body = `The service is busy (its storage did not answer in time); the sample was not recorded, try again (request id ${String(ctx.state.requestId)})`;
        ctx.app.emit('error', caught, ctx);
        return;
      }
      ctx.status = 500;
      ctx.body = `Internal server error (request id ${String(ctx.state.requestId)})`;
      ctx.app.emit('error', caught, ctx);
    }
  };
}
