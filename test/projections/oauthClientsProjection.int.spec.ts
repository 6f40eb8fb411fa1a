import { describe, expect, it } from 'vitest';
import type { OAuthClientEvent } from '../../domain/oauth/oauthClientEvents';
import { allProjections } from '../../projections';
import { OAuthClientQueries } from '../../projections/oauthClients/oauthClientQueries';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';

const at = (minute: number) => `2026-11-28T12:${String(minute).padStart(2, '0')}:00.000Z`;
const hash = (c: string) => c.repeat(43);

const registered = (clientId: string, ownerUserId: number, minute: number): OAuthClientEvent => ({
  type: 'OAuthClientRegistered',
  data: { clientId, ownerUserId, name: `App ${clientId}`, redirectUris: ['https://app.example.com/cb'], secretHash: hash(clientId[0]!), registered: at(minute) },
});
const deleted = (clientId: string, ownerUserId: number, minute: number): OAuthClientEvent => ({ type: 'OAuthClientDeleted', data: { clientId, ownerUserId, deleted: at(minute) } });

/** Applies the events in order, each one twice (at-least-once delivery), through every projection. */
async function project(events: OAuthClientEvent[]): Promise<OAuthClientQueries> {
  const store = new MemoryReadStore();
  let position = 0n;
  for (const e of events) {
    position += 1n;
    const stored: StoredEvent = {
      id: `00000000-0000-4000-8000-${position.toString().padStart(12, '0')}`,
      type: e.type,
      data: { ...e.data },
      metadata: { actor: 'user:7', correlationId: 'oauth', time: at(0) },
      streamId: `oauth-client-${e.data.clientId}`,
      revision: 0n,
      position,
    };
    for (const p of allProjections) {
      if (!p.handles.has(e.type)) continue;
      await p.apply(stored, store);
      await p.apply(stored, store);
    }
  }
  return new OAuthClientQueries(store);
}

const A = 'AAAAAAAAAAAAAAAAAAAAAA';
const B = 'BBBBBBBBBBBBBBBBBBBBBB';
const C = 'CCCCCCCCCCCCCCCCCCCCCC';

describe('the OAuth clients read model', () => {
  it("lists a user's own clients in registration order, and no one else's", async () => {
    const q = await project([registered(B, 7, 2), registered(C, 8, 3), registered(A, 7, 1)]);
    expect((await q.forOwner(7)).map((c) => c.clientId)).toEqual([A, B]);
    expect((await q.forOwner(8)).map((c) => c.clientId)).toEqual([C]);
    expect(await q.forOwner(9)).toEqual([]);
  });

  it('keeps what the token endpoint needs: the redirect URIs and the hash of the secret', async () => {
    const q = await project([registered(A, 7, 1)]);
    expect(await q.live(A)).toMatchObject({ clientId: A, ownerUserId: 7, name: `App ${A}`, redirectUris: ['https://app.example.com/cb'], secretHash: hash('A'), registered: at(1) });
  });

  it('drops a deleted client from the list and from the live lookup at once', async () => {
    const q = await project([registered(A, 7, 1), registered(B, 7, 2), deleted(A, 7, 3)]);
    expect((await q.forOwner(7)).map((c) => c.clientId)).toEqual([B]);
    expect(await q.live(A)).toBeNull();
    expect(await q.live(B)).not.toBeNull();
  });

  it('finds nothing for an id never registered', async () => {
    const q = await project([registered(A, 7, 1)]);
    expect(await q.live(B)).toBeNull();
  });
});
