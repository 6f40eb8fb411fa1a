// Cross-site request forgery: a browser attaches the `jwt` cookie to a form another site posts to
// us. Changes authenticated by that cookie must therefore come from the service's own pages. Every
// current browser sends `Origin` with each request that is not GET or HEAD, same-origin ones
// included (Fetch standard), so a request with neither `Origin` nor `Referer` does not come from our
// pages: it is refused too. Clients other than browsers send the token in `x-jwt-token` (as the
// official SDK does), which no other site can make a browser send, and are not concerned.
import type { Context } from 'koa';
import { ForbiddenError } from '../../domain/shared/errors';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The origin of a URL, or undefined when it is not one (`null`, garbage). */
function originOf(value: string): string | undefined {
  try {
    const origin = new URL(value).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/** Throws 403 unless a request authenticated by the cookie is safe or comes from our own origin. */
export function checkCookieRequestOrigin(ctx: Context, publicUrl: string): void {
  if (SAFE_METHODS.has(ctx.method)) return;
  const own = [originOf(publicUrl), originOf(`${ctx.protocol}://${ctx.host}`)];
  const origin = ctx.get('origin');
  // A `Referer` counts only when there is no `Origin` at all: an `Origin: null` is a refusal.
  const from = origin ? originOf(origin) : originOf(ctx.get('referer'));
  if (from !== undefined && own.includes(from)) return;
  throw new ForbiddenError(
    `Cross-site request refused: a change authenticated by the jwt cookie must come from ${own[0] ?? 'this service'} (its Origin or Referer header). ` +
      'Other clients send the token in the x-jwt-token header.',
    'CROSS_SITE_REQUEST',
  );
}
