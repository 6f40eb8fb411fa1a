// Middlewares that most requests have nothing to do with are passed by, so a GET does not pay for
// a body parser's content-type checks or a router's matching that could never take it.
import type { Middleware } from 'koa';

/**
 * `middleware` for the paths `pattern` admits, which must include every path it could act on
 * (routers match case-insensitively: so must the pattern); other requests go straight on.
 */
export const onPaths =
  (pattern: RegExp, middleware: Middleware): Middleware =>
  (ctx, next) =>
    pattern.test(ctx.path) ? middleware(ctx, next) : next();

/** `middleware` for requests of these methods only (upper case, as Node gives them). */
export function onMethods(methods: readonly string[], middleware: Middleware): Middleware {
  const taken = new Set(methods);
  return (ctx, next) => (taken.has(ctx.method) ? middleware(ctx, next) : next());
}
