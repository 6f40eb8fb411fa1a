import type { Middleware } from 'koa';

/**
 * An upload whose body stops coming (a device that lost its network without a reset) is answered
 * 408 after `idleMs` without a byte, and its connection closed: the handler's read of the body then
 * fails, its temporary file is removed, and nothing is stored. Progress is read from the socket's
 * byte count, so the body is left to the handler untouched. A slow but moving upload is never cut
 * here (Node's `requestTimeout` bounds the whole request). Time spent after the body is whole (the
 * parsing and storing of a large file) does not count.
 */
export function bodyIdleTimeout(idleMs: number): Middleware {
  const every = Math.max(20, Math.min(1000, Math.floor(idleMs / 4)));
  return async (ctx, next) => {
    const { req, res } = ctx;
    if (req.complete) return next();
    const socket = req.socket;
    let seen = socket.bytesRead;
    let quietSince = Date.now();
    const watch = setInterval(() => {
      if (req.complete || socket.destroyed) return clearInterval(watch);
      // Bytes Node holds unread (the handler has not begun reading, a check it awaits): the client is not idle, we are.
      if (socket.bytesRead !== seen || req.readableLength > 0) {
        seen = socket.bytesRead;
        quietSince = Date.now();
        return;
      }
      if (Date.now() - quietSince < idleMs) return;
      clearInterval(watch);
      if (res.headersSent) {
        req.destroy();
        return void socket.destroy();
      }
      const body = `The upload sent nothing for ${Math.round(idleMs / 1000)} s and was abandoned; nothing was stored (request id ${String(ctx.state.requestId)})`;
      res.writeHead(408, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
      // The answer first, then the request: its read (the handler's) fails, and the handler cleans up.
      res.end(body, () => {
        req.destroy();
        socket.destroy();
      });
    }, every);
    watch.unref();
    try {
      await next();
    } finally {
      clearInterval(watch);
    }
  };
}
