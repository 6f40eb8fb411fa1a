import { projectTwice } from '../support/projectTwice';
import { describe, expect, it } from 'vitest';
import type { OAuthArtifactEvent } from '../../domain/oauth/oauthArtifactEvents';
import { OAuthGrantQueries } from '../../projections/oauthGrants/oauthGrantQueries';
import type { MemoryReadStore } from '../../stores/readstore/memoryReadStore';

const at = (minute: number) => `2026-11-28T12:${String(minute).padStart(2, '0')}:00.000Z`;
const now = new Date(at(30));
const A = 'AAAAAAAAAAAAAAAAAAAAAA';
const B = 'BBBBBBBBBBBBBBBBBBBBBB';

const saved = (payload: Record<string, unknown>, expiresMinute = 59, kind: 'Grant' | 'AccessToken' = 'Grant'): OAuthArtifactEvent => ({
  type: 'OAuthArtifactSaved',
  data: { kind, payload, expires: at(expiresMinute) },
});
const ended = (minute: number): OAuthArtifactEvent => ({ type: 'OAuthArtifactEnded', data: { kind: 'Grant', reason: 'revoked', ended: at(minute) } });

/** Applies each [stream, event] in order, each one twice, through every projection (test/support/projectTwice.ts). */
async function project(events: [string, OAuthArtifactEvent][]): Promise<{ q: OAuthGrantQueries; store: MemoryReadStore }> {
  const store = await projectTwice(events.map(([streamId, e]) => ({ ...e, streamId })));
  return { q: new OAuthGrantQueries(store), store };
}

describe('the OAuth grants read model', () => {
  it("finds a client's and a user's live grants by the grant's stream", async () => {
    const { q } = await project([
      ['oauth-grant-g1', saved({ accountId: '7', clientId: A, sessionVersion: 2 })],
      ['oauth-grant-g2', saved({ accountId: '8', clientId: A, sessionVersion: 0 })],
      ['oauth-grant-g3', saved({ accountId: '7', clientId: B, sessionVersion: 2 })],
      ['oauth-access-token-t1', saved({ accountId: '7', clientId: A, grantId: 'g1' }, 59, 'AccessToken')],
    ]);
    expect((await q.liveForClient(A, now)).map((g) => [g._id, g.userId, g.sessionVersion])).toEqual([['oauth-grant-g1', 7, 2], ['oauth-grant-g2', 8, 0]]);
    expect((await q.liveForUser(7, now)).map((g) => [g._id, g.clientId])).toEqual([['oauth-grant-g1', A], ['oauth-grant-g3', B]]);
  });

  it('follows a grant saved again, and leaves out ended and expired grants', async () => {
    const { q } = await project([
      ['oauth-grant-g1', saved({ accountId: '7', clientId: A, sessionVersion: 1 })],
      ['oauth-grant-g1', saved({ accountId: '7', clientId: A, sessionVersion: 2 })],
      ['oauth-grant-g2', saved({ accountId: '7', clientId: A, sessionVersion: 2 })],
      ['oauth-grant-g2', ended(20)],
      ['oauth-grant-g3', saved({ accountId: '7', clientId: A, sessionVersion: 2 }, 10)],
    ]);
    expect((await q.liveForUser(7, now)).map((g) => [g._id, g.sessionVersion])).toEqual([['oauth-grant-g1', 2]]);
  });

  it('keeps a grant whose payload has no usable owner, client or version, with nulls', async () => {
    const { store } = await project([['oauth-grant-odd', saved({ accountId: 7, clientId: '', sessionVersion: 'x' })]]);
    expect(await store.collection('oauthGrants').findOne({ _id: 'oauth-grant-odd' })).toMatchObject({ userId: null, clientId: null, sessionVersion: null, ended: null });
  });
});
