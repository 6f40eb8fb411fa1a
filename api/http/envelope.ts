import type { Middleware } from 'koa';
import { DomainError } from '../../domain/shared/errors';
import { BlobNotFoundError } from '../../stores/blobstore/blobStore';
import { noteStorageFailure, STORAGE_FULL_MESSAGE, STORAGE_FULL_RETRY_AFTER_SECONDS } from '../../stores/storageFull';
import { isTransientStoreError, RETRY_AFTER_SECONDS } from '../../stores/transientErrors';

/** Errors thrown by Koa's own machinery (body parsing, allowed methods) carry an HTTP status. */
interface HttpLikeError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  message?: string;
}

function describeHttpError(error: HttpLikeError, status: number): string {
  if (status === 405) return error.message ?? 'Method not allowed';
  return error.expose && error.message ? error.message : 'Request failed';
}

/**
 * The management API's envelope: every JSON answer carries `success`; a failure carries `error`
 * and a status that fits it. Internals (stacks, driver messages) never reach the client: a 5xx
 * says only that it was our fault, with the request id to find it in the log.
 */
export function jsonEnvelope(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = { success: false, error: `No such endpoint: ${ctx.method} ${ctx.path}` };
      }
    } catch (caught) {
      const error = caught as HttpLikeError;
      if (caught instanceof DomainError) {
        ctx.status = caught.status;
        const retryAfter = (caught as { retryAfterSeconds?: unknown }).retryAfterSeconds;
        if (typeof retryAfter === 'number') ctx.set('Retry-After', String(retryAfter));
        ctx.body = { success: false, error: caught.message };
        return;
      }
      const status = error.status ?? error.statusCode;
      if (typeof status === 'number' && status >= 400 && status < 500) {
        ctx.status = status;
        ctx.body = { success: false, error: describeHttpError(error, status) };
        return;
      }
      if (caught instanceof BlobNotFoundError) {
        // Known to the read models, gone from the file store (a lost disk, a folder restored without
        // it): nothing the caller can fix, but not a fault to hide behind a bare 500 either.
        ctx.status = 410;
        ctx.body = { success: false, error: `The file behind this item is missing from the service's file store; an operator can find it in the log (request id ${String(ctx.state.requestId)})` };
        ctx.app.emit('error', caught, ctx);
        return;
      }
      if (noteStorageFailure(caught)) {
        ctx.status = 507;
        ctx.set('Retry-After', String(STORAGE_FULL_RETRY_AFTER_SECONDS));
        ctx.body = { success: false, error: `${STORAGE_FULL_MESSAGE} (request id ${String(ctx.state.requestId)})` };
        ctx.app.emit('error', caught, ctx);
        return;
      }
      if (isTransientStoreError(caught)) {
        ctx.status = 503;
        ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
        ctx.body = { success: false, error: `The service is busy (its storage did not answer in time); try again (request id ${String(ctx.state.requestId)})` };
        ctx.app.emit('error', caught, ctx);
        return;
      }
      ctx.status = 500;
      ctx.body = { success: false, error: `Internal server error (request id ${String(ctx.state.requestId)})` };
      ctx.app.emit('error', caught, ctx);
    }
  };
}
