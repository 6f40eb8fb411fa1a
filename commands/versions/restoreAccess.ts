// Who asked for a restore, as the job keeps it (never the key itself: its id), so the job can check
// when it starts that this access to the source still holds. Access that ended between the request
// and the job restores nothing.
import { isLive, type ApiKeyQueries } from '../../projections/apiKeys/apiKeyQueries';

/** The reader of the source: a collaborator, or a key of the source project (by id). */
export type RestoreReader = { kind: 'user'; userId: number } | { kind: 'apiKey'; apiKeyId: number };

export interface RestoreAccessDeps {
  projects: { byId(projectId: number): Promise<{ collaboratorIds: readonly number[] } | null> };
  apiKeys: Pick<ApiKeyQueries, 'byId'>;
}

export async function stillReads(deps: RestoreAccessDeps, sourceProjectId: number, reader: RestoreReader, now = new Date()): Promise<boolean> {
  if (reader.kind === 'user') return (await deps.projects.byId(sourceProjectId))?.collaboratorIds.includes(reader.userId) ?? false;
  const key = await deps.apiKeys.byId(reader.apiKeyId);
  return key !== null && key.projectId === sourceProjectId && isLive(key, now) && (await deps.projects.byId(sourceProjectId)) !== null;
}
