import type { Context } from 'koa';
import type { Logger } from 'pino';

/** What Node reports when a client resets or half-closes its connection mid-request. */
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE', 'HPE_INVALID_EOF_STATE']);

/**
 * Whether an error only says that the client went away: its own connection is gone. The same codes
 * from one of our connections (a database's ECONNRESET) are our failure.
 */
export function isClientGone(error: unknown, ctx: Context | undefined): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CLIENT_GONE.has(code) && ctx !== undefined && (ctx.req.destroyed || ctx.req.socket.destroyed);
}

/**
 * The app's 'error' listener. Koa also reports here the errors of a connection that ends before its
 * answer was sent: those are the clients' doing (a device losing its network), logged quietly so
 * that the loud entries stay ours.
 */
export function logRequestErrors(log: Logger, message: string): (error: unknown, ctx?: Context) => void {
  return (error, ctx) => {
    const requestId: unknown = ctx?.state.requestId;
    if (isClientGone(error, ctx)) log.debug({ code: (error as { code: string }).code, requestId }, 'the client closed the connection before the answer');
    else log.error({ err: error, requestId }, message);
  };
}
