// Who a device's hello speaks for: the project of its API key, when the key may connect devices.
import type { ApiKeyQueries } from '../projections/apiKeys/apiKeyQueries';
import type { ProjectDocument } from '../projections/projects/projectDocument';
import type { ProjectQueries } from '../projections/projects/projectQueries';
import type { ProjectionHealth } from '../projections/projectionStatus';

/** Roles whose keys may connect a device (issue 26; the CLI creates an `ingestion_deployment` key). */
export const REMOTE_MGMT_ROLES: ReadonlySet<string> = new Set(['admin', 'ingestion_deployment']);

export type HelloAuthentication =
  | { ok: true; projectId: number; apiKeyId: number }
  /** Answered `hello: false` (the device then stops for good: it drops its reconnect handler). */
  | { ok: false; reason: string; auth: false }
  /**
   * The read models stand still behind the log, so an unknown key may be a new one: close without
   * a reply and let the device reconnect (it does, 1 s after a close).
   */
  | { ok: false; retry: true; reason: string };

export async function authenticateHello(
  apiKey: string,
  deps: { apiKeys: Pick<ApiKeyQueries, 'live'>; projects: Pick<ProjectQueries, 'byId'>; health?: ProjectionHealth },
  now: Date,
): Promise<HelloAuthentication> {
  const unknown = (reason: string): HelloAuthentication => (deps.health?.stall?.() ? { ok: false, retry: true, reason: 'Read models are behind the log; try again' } : { ok: false, reason, auth: false });
  const key = await deps.apiKeys.live(apiKey, now);
  if (!key) return unknown('Invalid API key');
  if (!REMOTE_MGMT_ROLES.has(key.role)) return { ok: false, reason: `An API key with role "${key.role}" cannot connect a device`, auth: false };
  const project = await deps.projects.byId(key.projectId);
  if (!project) return unknown('Invalid API key: its project no longer exists');
  return { ok: true, projectId: project.id, apiKeyId: key.apiKeyId };
}

/** The HMAC key a sample request carries: the project's oldest live one, or none. */
export function samplingHmacKey(project: Pick<ProjectDocument, 'hmacKeys'>): string | undefined {
  const live = Object.values(project.hmacKeys ?? {})
    .filter((k) => !k.revoked)
    .sort((a, b) => a.id - b.id);
  return live[0]?.hmacKey;
}
