import type { Context } from 'koa';
import { INGESTION_CATEGORIES, type IngestionCategory } from '../domain/sample/sampleEvents';
import { NotFoundError, UnauthorizedError } from '../domain/shared/errors';
import type { ApiKeyQueries } from '../projections/apiKeys/apiKeyQueries';
import type { ProjectDocument } from '../projections/projects/projectDocument';
import type { ProjectQueries } from '../projections/projects/projectQueries';
import { refuseWhileStalled, type ProjectionHealth } from '../projections/projectionStatus';
import type { UploadTarget } from './ingestFile';
import { MissingHeaderError } from './uploadHeaders';

const INGESTING_ROLES = new Set(['admin', 'ingestiononly', 'ingestion_deployment']);

/** Every live HMAC key of the project verifies signatures; the matching one's id is recorded. */
function liveHmacKeys(project: ProjectDocument): { hmacKeys: string[]; hmacKeyIds: number[] } {
  const keys = Object.values(project.hmacKeys ?? {})
    .filter((k) => !k.revoked)
    .sort((a, b) => a.id - b.id);
  return { hmacKeys: keys.map((k) => k.hmacKey), hmacKeyIds: keys.map((k) => k.id) };
}

/** A credential not found: 401, or 503 while the read models stand still (it may be one made since). */
function unknown(health: ProjectionHealth, what: string, otherwise: string): never {
  refuseWhileStalled(health, what, 'the sample was not recorded, try again');
  throw new UnauthorizedError(otherwise);
}

/**
 * The project an upload goes to, from its API key: a live key of a role that may ingest. A key or
 * project not found while `health` reports the read models stalled is a 503, not a 401.
 */
export async function uploadTarget(ctx: Context, deps: { apiKeys: ApiKeyQueries; projects: ProjectQueries; health: ProjectionHealth }, category: string): Promise<UploadTarget> {
  // `split`: the device library's choice of letting the service divide files between training and testing.
  const split = category === 'split';
  if (!split && !(INGESTION_CATEGORIES as readonly string[]).includes(category)) throw new NotFoundError(`No such category: ${category} (training, testing, anomaly or split)`);
  const key = ctx.get('x-api-key');
  if (!key) throw new UnauthorizedError('Missing x-api-key header');
  const apiKey = await deps.apiKeys.live(key, new Date());
  if (!apiKey) return unknown(deps.health, 'This API key', 'Invalid API key');
  if (!INGESTING_ROLES.has(apiKey.role)) throw new UnauthorizedError(`An API key with role "${apiKey.role}" cannot ingest data`);
  const project = await deps.projects.liveDocument(apiKey.projectId);
  if (!project) return unknown(deps.health, "This API key's project", 'Invalid API key: its project no longer exists');
  if (!ctx.get('content-type')) throw new MissingHeaderError('Content-Type');
  return {
    projectId: project.id,
    apiKeyId: apiKey.apiKeyId,
    category: split ? 'training' : (category as IngestionCategory),
    split,
    ...liveHmacKeys(project),
    requestId: String(ctx.state.requestId),
  };
}
