// Routing that tests only the routes a path could match. @koa/router tests every route's pattern
// against every request, in order (two hundred for the management API, with a debug call each), and
// composes the chain of those that match anew. A route of plain segments and `:name` parameters
// matches only paths of as many segments (a parameter takes one whole segment; one trailing slash
// is allowed), so the routes are split, in their order, into one router per segment count, and a
// request is dispatched by its path's count to that one. What matches, in which order, and the
// 404/405 answers stay the router's own.
import Router, { type AllowedMethodsOptions } from '@koa/router';
import type { Middleware } from 'koa';

/**
 * A path of plain segments and `:name` parameters only: the routes whose segment count is fixed
 * (path-to-regexp's `*`, `{}`, `()`, `?`, `+` and `!` are none of these characters).
 */
const FIXED_SEGMENTS = /^(?:\/(?::[A-Za-z_$][\w$]*|[A-Za-z0-9._~-]+))+$/;

/** The number of `/`-separated segments of a request path, one trailing slash aside. */
export function segmentCount(path: string): number {
  let count = 0;
  const end = path.length > 1 && path.endsWith('/') ? path.length - 1 : path.length;
  for (let i = 0; i < end; i++) if (path.charCodeAt(i) === 47) count++;
  return count;
}

/**
 * The router's routes and `allowedMethods` (with `allowed`), as one middleware that tests a request
 * only against the routes of its path's segment count. Every route of `router` must be a method's
 * route on a path of fixed segments (no `router.use`, no wildcard or optional parts): one that is
 * not is refused here, at start, since it could match paths of another count.
 */
export function routesBySegments(router: Router, allowed: AllowedMethodsOptions): Middleware {
  const routers = routersBySegments(router);
  const dispatch = (bucket: Router): Middleware => {
    // The router's middlewares add their own fields (params, router) to the context they are given.
    const routes = bucket.routes() as unknown as Middleware;
    const methods = bucket.allowedMethods(allowed) as unknown as Middleware;
    return (ctx, next) => routes(ctx, () => methods(ctx, next));
  };
  const bySegments = new Map([...routers].map(([count, bucket]) => [count, dispatch(bucket)]));
  // A path no route could match still gets the router's answer to a method it does not know.
  const none = dispatch(new Router());
  return (ctx, next) => (bySegments.get(segmentCount(ctx.path)) ?? none)(ctx, next);
}

/** The router's routes split, in their order, into one router per segment count. */
export function routersBySegments(router: Router): Map<number, Router> {
  const routers = new Map<number, Router>();
  for (const layer of router.stack) {
    if (layer.methods.length === 0 || typeof layer.path !== 'string' || !FIXED_SEGMENTS.test(layer.path)) {
      throw new Error(`routesBySegments: route ${String(layer.path)} is not a method's route on fixed segments`);
    }
    const count = segmentCount(layer.path);
    let bucket = routers.get(count);
    if (!bucket) routers.set(count, (bucket = new Router()));
    bucket.stack.push(layer);
  }
  return routers;
}
