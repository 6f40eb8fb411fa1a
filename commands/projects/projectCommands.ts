// The project's commands after creation: settings, keys, collaborators, deletion. Each is one
// decision on the `project-{id}` stream; the caller settles on the returned position.
import { randomUUID } from 'node:crypto';
import { API_KEY_PREFIX, hashApiKey } from '../../domain/project/apiKeys';
import { projectDecider, type ProjectCommand } from '../../domain/project/projectDecider';
import { apiKeyUsageStream, projectStream, type ApiKeyRole } from '../../domain/project/projectEvents';
import type { ProjectSettingsChange } from '../../domain/project/projectSettings';
import { ValidationError } from '../../domain/shared/errors';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import { eventMetadata, type CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { IdAllocator } from '../idAllocator';
import type { UniquenessReservations } from '../uniqueness';
import { newApiKey, newHmacKey } from './createProject';

export interface ProjectCommandDeps {
  events: EventStore;
  ids: IdAllocator;
  reservations: UniquenessReservations;
}

/** Caller-chosen keys: the SDK's rule (`ei_` prefix, at least 32 characters), printable ASCII. */
export const MIN_API_KEY_LENGTH = 32;
const API_KEY_CHARS = /^[\x21-\x7e]+$/;

async function decide(deps: { events: EventStore }, projectId: number, command: ProjectCommand, ctx: CommandContext): Promise<Position | undefined> {
  const { appended } = await handleCommand(deps.events, projectStream(projectId), projectDecider, command, ctx);
  return appended?.position;
}

export const updateProject = (deps: { events: EventStore }, projectId: number, changes: ProjectSettingsChange, ctx: CommandContext) =>
  decide(deps, projectId, { type: 'UpdateProject', data: { changes, now: ctx.now } }, ctx);

export async function addApiKey(
  deps: ProjectCommandDeps,
  projectId: number,
  input: { name: string; role: ApiKeyRole; apiKey?: string; isDevelopmentKey: boolean; ttlSeconds?: number; createdByUserId: number | null },
  ctx: CommandContext,
): Promise<{ apiKeyId: number; apiKey: string; position: Position | undefined }> {
  let key = input.apiKey;
  if (key !== undefined) {
    if (!key.startsWith(API_KEY_PREFIX)) throw new ValidationError(`"apiKey": a chosen key must start with ${API_KEY_PREFIX}`);
    if (key.length < MIN_API_KEY_LENGTH) throw new ValidationError(`"apiKey": a chosen key must be at least ${MIN_API_KEY_LENGTH} characters long`);
    if (key.length > 256 || !API_KEY_CHARS.test(key)) throw new ValidationError('"apiKey": at most 256 printable characters without spaces');
  } else {
    key = newApiKey();
  }
  const apiKeyId = await deps.ids.next('apikey');
  // A chosen key must be unique across the installation: it alone names its project.
  if (input.apiKey !== undefined) {
    await deps.reservations.reserve('apikey', hashApiKey(key), projectStream(projectId), ctx, 'This API key is already in use; choose another');
  }
  const expires = input.ttlSeconds === undefined ? null : new Date(ctx.now.getTime() + input.ttlSeconds * 1000);
  const position = await decide(
    deps,
    projectId,
    {
      type: 'AddApiKey',
      data: { apiKeyId, name: input.name, role: input.role, key, hash: hashApiKey(key), isDevelopmentKey: input.isDevelopmentKey, expires, createdByUserId: input.createdByUserId, now: ctx.now },
    },
    ctx,
  );
  return { apiKeyId, apiKey: key, position };
}

export const revokeApiKey = (deps: { events: EventStore }, projectId: number, apiKeyId: number, ctx: CommandContext) =>
  decide(deps, projectId, { type: 'RevokeApiKey', data: { apiKeyId, now: ctx.now } }, ctx);

export async function addHmacKey(
  deps: ProjectCommandDeps,
  projectId: number,
  input: { name: string; hmacKey?: string; isDevelopmentKey: boolean; createdByUserId: number | null },
  ctx: CommandContext,
): Promise<{ hmacKeyId: number; position: Position | undefined }> {
  const hmacKeyId = await deps.ids.next('hmackey');
  const position = await decide(
    deps,
    projectId,
    {
      type: 'AddHmacKey',
      data: { hmacKeyId, name: input.name, hmacKey: input.hmacKey ?? newHmacKey(), isDevelopmentKey: input.isDevelopmentKey, createdByUserId: input.createdByUserId, now: ctx.now },
    },
    ctx,
  );
  return { hmacKeyId, position };
}

export const revokeHmacKey = (deps: { events: EventStore }, projectId: number, hmacKeyId: number, ctx: CommandContext) =>
  decide(deps, projectId, { type: 'RevokeHmacKey', data: { hmacKeyId, now: ctx.now } }, ctx);

export const addCollaborator = (deps: { events: EventStore }, projectId: number, userId: number, ctx: CommandContext) =>
  decide(deps, projectId, { type: 'AddCollaborator', data: { userId, now: ctx.now } }, ctx);

export const removeCollaborator = (deps: { events: EventStore }, projectId: number, userId: number, ctx: CommandContext) =>
  decide(deps, projectId, { type: 'RemoveCollaborator', data: { userId, now: ctx.now } }, ctx);

export const deleteProject = (deps: { events: EventStore }, projectId: number, fullDeletionDelayMs: number, ctx: CommandContext) =>
  decide(deps, projectId, { type: 'DeleteProject', data: { scheduledFullDeletionDate: new Date(ctx.now.getTime() + fullDeletionDelayMs), now: ctx.now } }, ctx);

export const fullyDeleteProject = (deps: { events: EventStore }, projectId: number, quarantinedBlobs: string[], ctx: CommandContext) =>
  decide(deps, projectId, { type: 'FullyDeleteProject', data: { quarantinedBlobs, now: ctx.now } }, ctx);

export const purgeProjectBlobs = (deps: { events: EventStore }, projectId: number, outcome: { purged: string[]; restored: string[] }, ctx: CommandContext) =>
  decide(deps, projectId, { type: 'PurgeProjectBlobs', data: { ...outcome, now: ctx.now } }, ctx);

/**
 * `lastUsed` of API keys: recorded on the key's own usage stream at most once an hour per key and
 * process, so that authentication does not write to the log on every request.
 */
export class ApiKeyUsageRecorder {
  private readonly recorded = new Map<number, number>();
  static readonly INTERVAL_MS = 3600_000;

  constructor(
    private readonly events: EventStore,
    private readonly onError: (error: unknown) => void,
  ) {}

  /**
   * For request paths, awaited before the answer (so a client's next request never races it; it
   * writes at most once an hour per key): a failure is reported, never thrown.
   */
  async note(projectId: number, apiKeyId: number, now = new Date()): Promise<void> {
    try {
      await this.used(projectId, apiKeyId, now);
    } catch (error) {
      // Not recorded: let the next use try again.
      this.recorded.delete(apiKeyId);
      this.onError(error);
    }
  }

  /** Records the use unless one was recorded within the hour; never fails the request. */
  async used(projectId: number, apiKeyId: number, now: Date): Promise<Position | undefined> {
    const last = this.recorded.get(apiKeyId);
    if (last !== undefined && now.getTime() - last < ApiKeyUsageRecorder.INTERVAL_MS) return undefined;
    this.recorded.set(apiKeyId, now.getTime());
    const ctx: CommandContext = { actor: `apikey:${apiKeyId}`, correlationId: randomUUID(), now };
    const appended = await this.events.appendToStream(
      apiKeyUsageStream(apiKeyId),
      [{ id: randomUUID(), type: 'ApiKeyUsed', data: { projectId, apiKeyId, date: now.toISOString() }, metadata: eventMetadata(ctx) }],
      'any',
    );
    return appended.position;
  }
}
