// The OAuth grant-endings saga: when an application's access ends because its client was deleted,
// the user's password changed (or was reset), or the account was deleted, the grants of it end in
// the log too, each with its cause. The tokens stopped working at that moment already (the adapter
// and the Bearer check read the client, the user and the session version: docs/oauth.md, "Ending
// access everywhere at once"); this makes the history say so, and keeps a grant from reviving. A
// deleted account's own clients are deleted with it, which ends the grants other users gave them.
import type { StoredEvent, EventStore } from '../../stores/eventstore/eventStore';
import type { ReadStore } from '../../stores/readstore/readStore';
import type { OAuthClientDeleted } from '../../domain/oauth/oauthClientEvents';
import { oauthArtifactDecider } from '../../domain/oauth/oauthArtifactDecider';
import type { OAuthGrantEndCause } from '../../domain/oauth/oauthArtifactEvents';
import { NotFoundError } from '../../domain/shared/errors';
import type { PasswordChanged, UserDeleted } from '../../domain/user/userEvents';
import { OAuthClientQueries } from '../../projections/oauthClients/oauthClientQueries';
import { oauthClientsProjection } from '../../projections/oauthClients/oauthClientsProjection';
import { OAuthGrantQueries } from '../../projections/oauthGrants/oauthGrantQueries';
import { oauthGrantsProjection } from '../../projections/oauthGrants/oauthGrantsProjection';
import { handleCommand } from '../handleCommand';
import { sagaContext, type Saga } from '../sagas/sagaRunner';
import { deleteOAuthClient } from './oauthClientCommands';

export const OAUTH_GRANT_ENDINGS_SAGA = 'oauth-grant-endings';

export interface OAuthGrantEndingsOptions {
  /** How long a reaction waits for the OAuth read models to reach its event before failing (and being retried). */
  catchUpMs?: number;
}

const READ_MODELS = [oauthGrantsProjection.checkpoint, oauthClientsProjection.checkpoint];

export function oauthGrantEndingsSaga(events: EventStore, readStore: ReadStore, options: OAuthGrantEndingsOptions = {}): Saga {
  const grants = new OAuthGrantQueries(readStore);
  const clients = new OAuthClientQueries(readStore);
  const catchUpMs = options.catchUpMs ?? 10_000;

  // The read models tell which grants and clients exist; they must have seen everything before the
  // event, or a grant saved just before it would be missed. The saga runner retries a reaction that throws.
  async function readModelsReach(event: StoredEvent): Promise<void> {
    const deadline = Date.now() + catchUpMs;
    for (;;) {
      const checkpoints = await Promise.all(READ_MODELS.map((name) => readStore.getCheckpoint(name)));
      if (checkpoints.every((c) => c !== undefined && c >= event.position)) return;
      if (Date.now() >= deadline) throw new Error(`The OAuth read models have not reached position ${event.position} yet`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async function end(event: StoredEvent, streams: readonly string[], cause: OAuthGrantEndCause, firstStep = 0): Promise<number> {
    let step = firstStep;
    for (const stream of streams) {
      const ctx = sagaContext(OAUTH_GRANT_ENDINGS_SAGA, event, { step: step++ });
      // Ending an ended grant decides nothing: a reaction repeated after a restart appends nothing new.
      await handleCommand(events, stream, oauthArtifactDecider, { type: 'EndOAuthArtifact', data: { kind: 'Grant', reason: 'revoked', cause, now: ctx.now } }, ctx);
    }
    return step;
  }

  return {
    name: OAUTH_GRANT_ENDINGS_SAGA,
    handles: new Set(['OAuthClientDeleted', 'PasswordChanged', 'UserDeleted']),
    async react(event: StoredEvent) {
      await readModelsReach(event);
      const now = new Date();
      switch (event.type) {
        case 'OAuthClientDeleted': {
          const { clientId } = event.data as OAuthClientDeleted['data'];
          await end(event, (await grants.liveForClient(clientId, now)).map((g) => g._id), 'client-deleted');
          return;
        }
        case 'PasswordChanged': {
          const { userId, sessionVersion } = event.data as PasswordChanged['data'];
          // Grants given after the change hold its version and live on.
          const older = (await grants.liveForUser(userId, now)).filter((g) => g.sessionVersion === null || g.sessionVersion < sessionVersion);
          await end(event, older.map((g) => g._id), 'password-changed');
          return;
        }
        case 'UserDeleted': {
          const { userId } = event.data as UserDeleted['data'];
          let step = await end(event, (await grants.liveForUser(userId, now)).map((g) => g._id), 'account-deleted');
          for (const client of await clients.forOwner(userId)) {
            try {
              await deleteOAuthClient(events, { clientId: client.clientId, requestedBy: userId }, sagaContext(OAUTH_GRANT_ENDINGS_SAGA, event, { step: step++ }));
            } catch (error) {
              // Deleted meanwhile by its owner: nothing left to do.
              if (!(error instanceof NotFoundError)) throw error;
            }
          }
          return;
        }
        default:
          return;
      }
    },
  };
}
