// Which white label a request or a project is in. A request is in the white label whose domain its
// host is (Koa's `hostname`: the Host header without its port, or X-Forwarded-Host behind a
// trusted proxy); a project is in the white label it was made in, while that white label exists.
import type { Context } from 'koa';
import { ForbiddenError } from '../../domain/shared/errors';
import type { ProjectDocument } from '../../projections/projects/projectDocument';
import type { WhitelabelDocument } from '../../projections/whitelabels/whitelabelDocument';
import type { WhitelabelQueries } from '../../projections/whitelabels/whitelabelQueries';

type Whitelabels = { whitelabels: Pick<WhitelabelQueries, 'byDomain' | 'byId'> };

/** The white label whose domain the request came to; null on the main host. */
export function whitelabelOfHost(deps: Pick<Whitelabels, 'whitelabels'>, ctx: Pick<Context, 'hostname'>): Promise<WhitelabelDocument | null> {
  const host = ctx.hostname.toLowerCase();
  return host === '' ? Promise.resolve(null) : deps.whitelabels.byDomain(host);
}

/**
 * The white label whose deployment targets and learn blocks a project sees: its own, from whatever
 * host it is reached; for a project of none (or of a white label deleted since), the host's.
 */
export async function whitelabelOfProject(deps: Whitelabels, project: Pick<ProjectDocument, 'whitelabelId'>, ctx: Pick<Context, 'hostname'>): Promise<WhitelabelDocument | null> {
  if (typeof project.whitelabelId === 'number') {
    const own = await deps.whitelabels.byId(project.whitelabelId);
    if (own) return own;
  }
  return whitelabelOfHost(deps, ctx);
}

/** Refuses what a white label switched off, naming the switch. */
export function requireSwitch(whitelabel: WhitelabelDocument | null, name: 'allowSignup' | 'allowPasswordAuth', what: string): void {
  if (whitelabel && !whitelabel[name]) {
    throw new ForbiddenError(`${what} is not allowed on ${whitelabel.domain} (the white label's ${name} is false)`, name === 'allowSignup' ? 'SIGNUP_NOT_ALLOWED' : 'PASSWORD_AUTH_NOT_ALLOWED');
  }
}
