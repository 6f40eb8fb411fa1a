import { projectTwice } from '../support/projectTwice';
import { describe, expect, it } from 'vitest';
import type { OAuthClientEvent } from '../../domain/oauth/oauthClientEvents';
import { OAuthClientQueries } from '../../projections/oauthClients/oauthClientQueries';

const at = (minute: number) => `2026-11-28T12:${String(minute).padStart(2, '0')}:00.000Z`;
const hash = (c: string) => c.repeat(43);

const registered = (clientId: string, ownerUserId: number, minute: number): OAuthClientEvent => ({
  type: 'OAuthClientRegistered',
  data: { clientId, ownerUserId, name: `App ${clientId}`, redirectUris: ['https://app.example.com/cb'], secretHash: hash(clientId[0]!), registered: at(minute) },
});
const deleted = (clientId: string, ownerUserId: number, minute: number): OAuthClientEvent => ({ type: 'OAuthClientDeleted', data: { clientId, ownerUserId, deleted: at(minute) } });

/** Applies the events in order, each one twice, through every projection (test/support/projectTwice.ts). */
async function project(events: OAuthClientEvent[]): Promise<OAuthClientQueries> {
  return new OAuthClientQueries(await projectTwice(events.map((e) => ({ ...e, streamId: `oauth-client-${e.data.clientId}` }))));
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
