import { describe, expect, it } from 'vitest';
import { MAX_ARTIFACT_PAYLOAD_CHARS, oauthArtifactDecider, type OAuthArtifactCommand } from '../../domain/oauth/oauthArtifactDecider';
import { oauthArtifactStream, type OAuthArtifactEvent } from '../../domain/oauth/oauthArtifactEvents';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(oauthArtifactDecider);
const now = new Date('2026-11-28T10:00:00.000Z');
const later = new Date('2026-11-28T10:00:30.000Z');
const payload = { accountId: '7', clientId: 'Yq3x9V0pKcN2mW7tRb5sLa', grantId: 'g1', scope: 'user:read', iat: 1795860000, exp: 1795860060 };

const save = (over: Partial<Extract<OAuthArtifactCommand, { type: 'SaveOAuthArtifact' }>['data']> = {}): OAuthArtifactCommand => ({
  type: 'SaveOAuthArtifact',
  data: { kind: 'AuthorizationCode', payload, expiresInSeconds: 60, now, ...over },
});
const consume = (at = later): OAuthArtifactCommand => ({ type: 'ConsumeOAuthArtifact', data: { kind: 'AuthorizationCode', now: at } });
const end = (reason: 'destroyed' | 'revoked' = 'destroyed', at = later): OAuthArtifactCommand => ({ type: 'EndOAuthArtifact', data: { kind: 'AuthorizationCode', reason, now: at } });

const saved: OAuthArtifactEvent = { type: 'OAuthArtifactSaved', data: { kind: 'AuthorizationCode', payload, expires: '2026-11-28T10:01:00.000Z' } };
const consumed: OAuthArtifactEvent = { type: 'OAuthArtifactConsumed', data: { kind: 'AuthorizationCode', consumed: later.toISOString() } };
const ended: OAuthArtifactEvent = { type: 'OAuthArtifactEnded', data: { kind: 'AuthorizationCode', reason: 'destroyed', ended: later.toISOString() } };

describe('an artifact never saved', () => {
  it('is saved with its payload and when it expires', () => {
    spec.given([]).when(save()).then([saved]);
  });

  it('cannot be consumed', () => {
    spec.given([]).when(consume()).thenThrows(NotFoundError, /not found/);
  });

  it('ends as nothing: there is nothing to end', () => {
    spec.given([]).when(end('revoked')).then([]);
  });

  it('is refused a payload that holds its id (jti), which is a bearer secret', () => {
    spec.given([]).when(save({ payload: { ...payload, jti: 'the-code-itself' } })).thenThrows(ValidationError, /jti/);
  });

  it('is refused a payload too large to keep, or one that is no JSON object', () => {
    spec.given([]).when(save({ payload: { blob: 'x'.repeat(MAX_ARTIFACT_PAYLOAD_CHARS) } })).thenThrows(ValidationError, /at most/);
    spec.given([]).when(save({ payload: { n: Number.NaN } })).thenThrows(ValidationError, /JSON/);
    spec.given([]).when(save({ payload: { d: new Date(0) } as unknown as Record<string, unknown> })).thenThrows(ValidationError, /JSON/);
    spec.given([]).when(save({ payload: [] as unknown as Record<string, unknown> })).thenThrows(ValidationError, /JSON object/);
  });

  it('is refused a lifetime that is not a positive number of seconds, or a kind that is none', () => {
    spec.given([]).when(save({ expiresInSeconds: 0 })).thenThrows(ValidationError, /expiresInSeconds/);
    spec.given([]).when(save({ expiresInSeconds: Number.POSITIVE_INFINITY })).thenThrows(ValidationError, /expiresInSeconds/);
    spec.given([]).when(save({ kind: 'Client' as never })).thenThrows(ValidationError, /kind/);
  });
});

describe('a saved artifact', () => {
  it('is saved again (oidc-provider upserts sessions, grants and interactions as they change)', () => {
    const next = { ...payload, scope: 'user:read projects:read' };
    spec.given([saved]).when(save({ payload: next, now: later })).then([{ type: 'OAuthArtifactSaved', data: { kind: 'AuthorizationCode', payload: next, expires: '2026-11-28T10:01:30.000Z' } }]);
  });

  it('is consumed once; a second consumption is refused (a replayed code)', () => {
    spec.given([saved]).when(consume()).then([consumed]);
    spec.given([saved, consumed]).when(consume()).thenThrows(ConflictError, /already consumed/);
  });

  it('ends, and ending it again changes nothing', () => {
    spec.given([saved]).when(end()).then([ended]);
    spec.given([saved, ended]).when(end('revoked')).then([]);
  });
});

describe('an ended artifact', () => {
  it('is never saved or consumed again', () => {
    spec.given([saved, ended]).when(save()).thenThrows(ConflictError, /ended/);
    spec.given([saved, ended]).when(consume()).thenThrows(NotFoundError, /not found/);
  });
});

describe('the artifact streams', () => {
  it('are named after the kind and the hash of the id, never the id', () => {
    expect(oauthArtifactStream('AccessToken', 'h4sh')).toBe('oauth-access-token-h4sh');
    expect(oauthArtifactStream('Session', 'h4sh')).toBe('oauth-session-h4sh');
    expect(oauthArtifactStream('Grant', 'h4sh')).toBe('oauth-grant-h4sh');
  });
});

describe('a grant the service ends', () => {
  const grant = { accountId: '7', clientId: 'Yq3x9V0pKcN2mW7tRb5sLa', sessionVersion: 1 };
  const grantSaved: OAuthArtifactEvent = { type: 'OAuthArtifactSaved', data: { kind: 'Grant', payload: grant, expires: '2026-11-28T10:01:00.000Z' } };
  const revoke = (cause: unknown, kind: 'Grant' | 'AccessToken' = 'Grant', reason: 'destroyed' | 'revoked' = 'revoked'): OAuthArtifactCommand =>
    ({ type: 'EndOAuthArtifact', data: { kind, reason, cause, now: later } }) as OAuthArtifactCommand;

  it('ends revoked with the cause, once', () => {
    const revoked: OAuthArtifactEvent = { type: 'OAuthArtifactEnded', data: { kind: 'Grant', reason: 'revoked', cause: 'client-deleted', ended: later.toISOString() } };
    spec.given([grantSaved]).when(revoke('client-deleted')).then([revoked]);
    spec.given([grantSaved, revoked]).when(revoke('password-changed')).then([]);
  });

  it('is refused an unknown cause, a cause on anything but a revoked grant, or an unknown reason', () => {
    spec.given([grantSaved]).when(revoke('bored')).thenThrows(ValidationError, /cause/);
    spec.given([grantSaved]).when(revoke('account-deleted', 'Grant', 'destroyed')).thenThrows(ValidationError, /cause/);
    spec.given([saved]).when(revoke('account-deleted', 'AccessToken')).thenThrows(ValidationError, /cause/);
    spec.given([grantSaved]).when({ type: 'EndOAuthArtifact', data: { kind: 'Grant', reason: 'expired' as 'revoked', now: later } }).thenThrows(ValidationError, /destroyed or revoked/);
  });
});
