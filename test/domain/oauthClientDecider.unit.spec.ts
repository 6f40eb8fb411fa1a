import { describe, expect, it } from 'vitest';
import { MAX_OAUTH_CLIENTS_PER_USER, oauthClientDecider, type OAuthClientCommand } from '../../domain/oauth/oauthClientDecider';
import { oauthClientStream, type OAuthClientEvent } from '../../domain/oauth/oauthClientEvents';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(oauthClientDecider);
const now = new Date('2026-11-28T10:00:00.000Z');
const later = new Date('2026-11-28T11:00:00.000Z');
const clientId = 'Yq3x9V0pKcN2mW7tRb5sLa';
// SHA-256 of a secret, base64url: the only form of the secret the log may hold.
const secretHash = 'n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg';

type RegisterData = Extract<OAuthClientCommand, { type: 'RegisterOAuthClient' }>['data'];
const register = (overrides: Partial<RegisterData> = {}): OAuthClientCommand => ({
  type: 'RegisterOAuthClient',
  data: { clientId, ownerUserId: 7, name: 'Plant dashboard', redirectUris: ['https://dash.example.com/callback'], secretHash, liveClients: 0, now, ...overrides },
});
const remove = (requestedBy = 7, at = later): OAuthClientCommand => ({ type: 'DeleteOAuthClient', data: { clientId, requestedBy, now: at } });

const registered: OAuthClientEvent = {
  type: 'OAuthClientRegistered',
  data: { clientId, ownerUserId: 7, name: 'Plant dashboard', redirectUris: ['https://dash.example.com/callback'], secretHash, registered: now.toISOString() },
};
const deleted: OAuthClientEvent = { type: 'OAuthClientDeleted', data: { clientId, ownerUserId: 7, deleted: later.toISOString() } };

const refusedUri = (uri: string, message: RegExp) => spec.given([]).when(register({ redirectUris: [uri] })).thenThrows(ValidationError, message);

describe('a client id never registered', () => {
  it('is registered with its owner, trimmed name, redirect URIs and the hash of its secret', () => {
    spec.given([]).when(register({ name: '  Plant dashboard ' })).then([registered]);
  });

  it('accepts several redirect URIs, http on the loopback hosts, ports, paths and queries', () => {
    const redirectUris = [
      'https://dash.example.com/callback',
      'http://localhost:3000/cb',
      'http://127.0.0.1:8080/oauth/callback?tenant=a',
      'http://[::1]/cb',
      'https://dash.example.com:8443/a/b?x=1&y=2',
    ];
    spec.given([]).when(register({ redirectUris })).thenMatches(([event]) => {
      expect(event).toMatchObject({ type: 'OAuthClientRegistered', data: { redirectUris } });
    });
  });

  it('is refused once its owner holds the most clients one user may hold', () => {
    spec.given([]).when(register({ liveClients: MAX_OAUTH_CLIENTS_PER_USER - 1 })).then([expect.objectContaining({ type: 'OAuthClientRegistered' }) as OAuthClientEvent]);
    spec.given([]).when(register({ liveClients: MAX_OAUTH_CLIENTS_PER_USER })).thenThrows(ValidationError, /the most one user may hold \(25\); delete one first/);
  });

  it('cannot be deleted', () => {
    spec.given([]).when(remove()).thenThrows(NotFoundError, /OAuth client .* not found/);
  });

  it('is refused without a redirect URI, with more than ten, or with one listed twice', () => {
    spec.given([]).when(register({ redirectUris: [] })).thenThrows(ValidationError, /"redirectUris"\) must list at least one/);
    const eleven = Array.from({ length: 11 }, (_, i) => `https://dash.example.com/cb${i}`);
    spec.given([]).when(register({ redirectUris: eleven })).thenThrows(ValidationError, /at most 10/);
    const twice = ['https://dash.example.com/cb', 'https://dash.example.com/cb'];
    spec.given([]).when(register({ redirectUris: twice })).thenThrows(ValidationError, /listed twice/);
  });

  it('is refused a redirect URI that is relative, not a URL, or of another scheme', () => {
    refusedUri('/callback', /is not an absolute URL/);
    refusedUri('dash.example.com/callback', /is not an absolute URL/);
    refusedUri('', /is not an absolute URL/);
    refusedUri('javascript:alert(1)', /must be an http or https URL/);
    refusedUri('ftp://dash.example.com/cb', /must be an http or https URL/);
    refusedUri('com.example.app:/cb', /must be an http or https URL/);
  });

  it('is refused a redirect URI with a fragment, even an empty one', () => {
    refusedUri('https://dash.example.com/cb#frag', /must not have a fragment/);
    refusedUri('https://dash.example.com/cb#', /must not have a fragment/);
  });

  it('is refused plain http except on localhost, 127.0.0.1 and [::1]', () => {
    refusedUri('http://dash.example.com/cb', /must use https \(http only on localhost/);
    refusedUri('http://localhost.evil.example/cb', /must use https/);
    refusedUri('http://127.0.0.2/cb', /must use https/);
  });

  it('is refused a redirect URI carrying a user name or password', () => {
    refusedUri('https://user:pass@dash.example.com/cb', /must not carry a user name or password/);
  });

  it('is refused a redirect URI with blanks or control characters, which a URL parser would drop silently', () => {
    refusedUri(' https://dash.example.com/cb', /spaces or control characters/);
    refusedUri('https://dash.example.com/cb\n', /spaces or control characters/);
    refusedUri('https://dash.example.com/c\tb', /spaces or control characters/);
    refusedUri('https://dash.example.com/c b', /spaces or control characters/);
    refusedUri('https://dash.exa\u202Emple.com/cb', /spaces or control characters/);
  });

  it('is refused an over-long redirect URI (a 3 MB one included)', () => {
    refusedUri(`https://dash.example.com/${'a'.repeat(2000)}`, /at most 2000 characters/);
    refusedUri(`https://dash.example.com/${'a'.repeat(3_000_000)}`, /at most 2000 characters/);
  });

  it('is refused an empty, over-long or control-character name', () => {
    spec.given([]).when(register({ name: ' ' })).thenThrows(ValidationError, /Application name \("name"\) is empty/);
    spec.given([]).when(register({ name: 'n'.repeat(257) })).thenThrows(ValidationError, /"name"\) is 257 characters long; at most 256/);
    spec.given([]).when(register({ name: 'a\nb' })).thenThrows(ValidationError, /"name"\) contains a control character/);
  });

  it('is refused a client id, secret hash, owner or time that is not one', () => {
    spec.given([]).when(register({ clientId: 'short' })).thenThrows(ValidationError, /Client id/);
    spec.given([]).when(register({ clientId: 'has/slash-and-enough-characters' })).thenThrows(ValidationError, /Client id/);
    spec.given([]).when(register({ secretHash: 'the-secret-itself' })).thenThrows(ValidationError, /secret hash/);
    spec.given([]).when(register({ ownerUserId: Number.NaN })).thenThrows(ValidationError, /ownerUserId must be a number/);
    spec.given([]).when(register({ now: new Date(Number.NaN) })).thenThrows(ValidationError, /now is not a valid date/);
  });
});

describe('a registered client', () => {
  it('is deleted by its owner', () => {
    spec.given([registered]).when(remove()).then([deleted]);
  });

  it('is not found by anyone else, who learns nothing of it', () => {
    spec.given([registered]).when(remove(8)).thenThrows(NotFoundError, /OAuth client .* not found/);
  });

  it('cannot be registered again', () => {
    spec.given([registered]).when(register()).thenThrows(ConflictError, /already registered/);
  });
});

describe('a deleted client', () => {
  it('cannot be deleted again', () => {
    spec.given([registered, deleted]).when(remove()).thenThrows(NotFoundError, /OAuth client .* not found/);
  });

  it('keeps its id: a new registration under it is refused', () => {
    spec.given([registered, deleted]).when(register()).thenThrows(ConflictError, /already registered/);
  });
});

describe('the client stream', () => {
  it('is named after the client id', () => {
    expect(oauthClientStream(clientId)).toBe(`oauth-client-${clientId}`);
  });
});
