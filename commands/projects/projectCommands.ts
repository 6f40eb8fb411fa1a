// The project's commands after creation: settings, keys, collaborators, deletion. Each is one
// decision on the `project-{id}` stream; the caller settles on the returned position.
import { randomUUID } from 'node:crypto';
import { API_KEY_PREFIX, UNUSABLE_API_KEY, hashApiKey } from '../../domain/project/apiKeys';
import { projectDecider, type ProjectCommand } from '../../domain/project/projectDecider';
import { apiKeyUsageStream, projectStream, type ApiKeyRole } from '../../domain/project/projectEvents';
import type { ProjectSettingsChange } from '../../domain/project/projectSettings';
import { ConflictError, ValidationError } from '../../domain/shared/errors';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import { eventMetadata, type CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { IdAllocator } from '../idAllocator';
import type { UniquenessReservations } from '../uniqueness';
import { newApiKey, newHmacKey, reserveIssuedApiKey } from './createProject';

export interface ProjectCommandDeps {
  events: EventStore;
  ids: IdAllocator;
  reservations: UniquenessReservations;
}

export interface ApiKeyCommandDeps extends ProjectCommandDeps {
  /**
   * `everIssued`: whether any project ever had a key with this hash (live, revoked, expired, of a
   * deleted project). Keys issued before every value was reserved have no reservation.
   */
  apiKeys: { everIssued(hash: string): Promise<boolean> };
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
  deps: ApiKeyCommandDeps,
  projectId: number,
  input: { name: string; role: ApiKeyRole; apiKey?: string; isDevelopmentKey: boolean; ttlSeconds?: number; createdByUserId: number | null },
  ctx: CommandContext,
): Promise<{ apiKeyId: number; apiKey: string; position: Position | undefined }> {
  const key = input.apiKey === undefined ? newApiKey() : await reserveChosenApiKey(deps, projectId, input.apiKey, ctx);
  const apiKeyId = await deps.ids.next('apikey');
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
  if (input.apiKey === undefined) await reserveIssuedApiKey(deps.reservations, key, projectStream(projectId), ctx);
  return { apiKeyId, apiKey: key, position };
}

/**
 * A chosen value is refused, with one neutral message and before anything is appended, when its
 * form is wrong or any key ever had it; otherwise it is reserved for this project for good (keys
 * are never released, so a revoked or expired key's value is never issued again).
 */
async function reserveChosenApiKey(deps: ApiKeyCommandDeps, projectId: number, key: string, ctx: CommandContext): Promise<string> {
  const unusable = () => new ValidationError(UNUSABLE_API_KEY, 'UNUSABLE_API_KEY');
  if (!key.startsWith(API_KEY_PREFIX) || key.length < MIN_API_KEY_LENGTH || key.length > 256 || !API_KEY_CHARS.test(key)) throw unusable();
  const hash = hashApiKey(key);
  if (await deps.apiKeys.everIssued(hash)) throw unusable();
  try {
    await deps.reservations.reserve('apikey', hash, projectStream(projectId), ctx, 'taken');
  } catch (error) {
    if (error instanceof ConflictError) throw unusable();
    throw error;
  }
  return key;
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

/** A pending invitation: the invitee gets access only once they accept it (JWT, their own account). */
export async function inviteCollaborator(
  deps: { events: EventStore; ids: IdAllocator },
  projectId: number,
  input: { userId: number | null; invitedAs: string; invitedByUserId: number },
  ctx: CommandContext,
): Promise<{ invitationId: number; position: Position | undefined }> {
  const invitationId = await deps.ids.next('invitation');
  const position = await decide(deps, projectId, { type: 'InviteCollaborator', data: { invitationId, ...input, now: ctx.now } }, ctx);
  return { invitationId, position };
}

export const acceptCollaboratorInvitation = (deps: { events: EventStore }, projectId: number, invitationId: number, userId: number, ctx: CommandContext) =>
  decide(deps, projectId, { type: 'AcceptCollaboratorInvitation', data: { invitationId, userId, now: ctx.now } }, ctx);

export const declineCollaboratorInvitation = (deps: { events: EventStore }, projectId: number, invitationId: number, userId: number, ctx: CommandContext) =>
  decide(deps, projectId, { type: 'DeclineCollaboratorInvitation', data: { invitationId, userId, now: ctx.now } }, ctx);

export const withdrawCollaboratorInvitation = (deps: { events: EventStore }, projectId: number, invitationId: number, withdrawnByUserId: number | null, ctx: CommandContext) =>
  decide(deps, projectId, { type: 'WithdrawCollaboratorInvitation', data: { invitationId, withdrawnByUserId, now: ctx.now } }, ctx);

/** Removes a collaborator, or withdraws the invitation of someone who has not accepted yet. */
export const removeCollaborator = (deps: { events: EventStore }, projectId: number, userId: number, byUserId: number | null, ctx: CommandContext) =>
  decide(deps, projectId, { type: 'RemoveCollaborator', data: { userId, byUserId, now: ctx.now } }, ctx);

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
