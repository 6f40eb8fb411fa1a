import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { checkClientId, oauthClientDecider } from '../../domain/oauth/oauthClientDecider';
import { oauthClientStream } from '../../domain/oauth/oauthClientEvents';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';

/** SHA-256, base64url: a secret of 32 random bytes needs no slow hash (docs/oauth.md, client secrets). */
export const hashClientSecret = (secret: string): string => createHash('sha256').update(secret, 'utf8').digest('base64url');

/** Whether `presented` is the secret of `secretHash`, compared in constant time (oidc-provider's `compareClientSecret`). */
export function clientSecretMatches(presented: string, secretHash: string): boolean {
  const actual = createHash('sha256').update(presented, 'utf8').digest();
  const expected = Buffer.from(secretHash, 'base64url');
  return expected.length === actual.length && timingSafeEqual(actual, expected);
}

export interface RegisteredClient {
  clientId: string;
  /** Shown to the owner once; the log keeps only its hash. */
  clientSecret: string;
  position: Position;
}

/** Registers a user's application under a fresh random id (16 bytes) with a fresh secret (32 bytes). */
export async function registerOAuthClient(
  events: EventStore,
  input: { ownerUserId: number; name: string; redirectUris: readonly string[]; liveClients: number },
  ctx: CommandContext,
): Promise<RegisteredClient> {
  const clientId = randomBytes(16).toString('base64url');
  const clientSecret = randomBytes(32).toString('base64url');
  const { appended } = await handleCommand(
    events,
    oauthClientStream(clientId),
    oauthClientDecider,
    { type: 'RegisterOAuthClient', data: { ...input, clientId, secretHash: hashClientSecret(clientSecret), now: ctx.now } },
    ctx,
    { newStream: true },
  );
  // A registration always appends (or throws): the decider refuses rather than deciding nothing.
  return { clientId, clientSecret, position: appended!.position };
}

/** Deletes a client for its owner; anyone else, like an unknown id, gets NotFoundError. */
export async function deleteOAuthClient(events: EventStore, input: { clientId: string; requestedBy: number }, ctx: CommandContext): Promise<Position> {
  const clientId = checkClientId(input.clientId);
  const { appended } = await handleCommand(events, oauthClientStream(clientId), oauthClientDecider, { type: 'DeleteOAuthClient', data: { ...input, clientId, now: ctx.now } }, ctx);
  return appended!.position;
}
