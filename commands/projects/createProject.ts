import { randomBytes } from 'node:crypto';
import { API_KEY_PREFIX, hashApiKey } from '../../domain/project/apiKeys';
import { projectDecider, type HostWhitelabel } from '../../domain/project/projectDecider';
import { projectStream } from '../../domain/project/projectEvents';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { IdAllocator } from '../idAllocator';
import type { UniquenessReservations } from '../uniqueness';

export interface CreateProjectDeps {
  events: EventStore;
  ids: IdAllocator;
  reservations: UniquenessReservations;
}

export const newApiKey = (): string => API_KEY_PREFIX + randomBytes(32).toString('hex');
export const newHmacKey = (): string => randomBytes(16).toString('hex');

/**
 * A generated value is reserved like a chosen one once its key is issued, so that no one can choose
 * it later (the read-model check of chosen values covers the moment between). Reserved after the
 * append, so that a refused command appends nothing; 256 random bits never collide.
 */
export async function reserveIssuedApiKey(reservations: UniquenessReservations, key: string, ownerStream: string, ctx: CommandContext): Promise<void> {
  await reservations.tryReserve('apikey', hashApiKey(key), ownerStream, ctx);
}

export interface CreateProjectInput {
  name: string;
  ownerUserId: number;
  isPublic: boolean;
  /** The white label whose domain the request came to, if any. */
  hostWhitelabel?: HostWhitelabel | undefined;
  /** The organization that owns the project, and its white label, if it is made in one. */
  ownerOrganization?: { organizationId: number; whitelabelId: number | null } | undefined;
}

/** Creates a project owned by the user (in an organization, if given), with its development API key and HMAC key. */
export async function createProject(
  deps: CreateProjectDeps,
  input: CreateProjectInput,
  ctx: CommandContext,
): Promise<{ projectId: number; apiKey: string; position: Position }> {
  const [projectId, apiKeyId, hmacKeyId] = await Promise.all([deps.ids.next('project'), deps.ids.next('apikey'), deps.ids.next('hmackey')]);
  const apiKey = newApiKey();
  const { appended } = await handleCommand(
    deps.events,
    projectStream(projectId),
    projectDecider,
    {
      type: 'CreateProject',
      data: {
        projectId,
        name: input.name,
        ownerUserId: input.ownerUserId,
        isPublic: input.isPublic,
        developmentApiKey: { id: apiKeyId, key: apiKey, hash: hashApiKey(apiKey) },
        developmentHmacKey: { id: hmacKeyId, key: newHmacKey() },
        ...(input.hostWhitelabel ? { hostWhitelabel: input.hostWhitelabel } : {}),
        ...(input.ownerOrganization ? { ownerOrganization: input.ownerOrganization } : {}),
        now: ctx.now,
      },
    },
    ctx,
  );
  await reserveIssuedApiKey(deps.reservations, apiKey, projectStream(projectId), ctx);
  return { projectId, apiKey, position: appended!.position };
}
