import { randomBytes } from 'node:crypto';
import { API_KEY_PREFIX, hashApiKey } from '../../domain/project/apiKeys';
import { projectDecider } from '../../domain/project/projectDecider';
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
 * Generated values are reserved like chosen ones, so that no one can choose them later. 256 random
 * bits do not collide; should the value be held all the same, another is drawn.
 */
export async function reserveGeneratedApiKey(reservations: UniquenessReservations, ownerStream: string, ctx: CommandContext): Promise<string> {
  for (;;) {
    const key = newApiKey();
    if (await reservations.tryReserve('apikey', hashApiKey(key), ownerStream, ctx)) return key;
  }
}

/** Creates a project owned by the user, with its development API key and HMAC key. */
export async function createProject(
  deps: CreateProjectDeps,
  input: { name: string; ownerUserId: number; isPublic: boolean },
  ctx: CommandContext,
): Promise<{ projectId: number; apiKey: string; position: Position }> {
  const [projectId, apiKeyId, hmacKeyId] = await Promise.all([deps.ids.next('project'), deps.ids.next('apikey'), deps.ids.next('hmackey')]);
  const apiKey = await reserveGeneratedApiKey(deps.reservations, projectStream(projectId), ctx);
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
        now: ctx.now,
      },
    },
    ctx,
  );
  return { projectId, apiKey, position: appended!.position };
}
