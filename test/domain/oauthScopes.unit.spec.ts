import { describe, expect, it } from 'vitest';
import { API_SCOPES, OAUTH_SCOPES, scopeWords, unknownScopes } from '../../domain/oauth/oauthScopes';

describe('the OAuth scopes', () => {
  it("are the spec's four API scopes, plus offline_access and openid for the protocol", () => {
    expect([...API_SCOPES]).toEqual(['user:read', 'projects:read', 'organizations:read', 'users:emails:read']);
    expect([...OAUTH_SCOPES]).toEqual(['openid', 'offline_access', ...API_SCOPES]);
  });

  it('each have words a person reads on the consent page', () => {
    for (const scope of OAUTH_SCOPES) expect(scopeWords(scope)).toMatch(/^[A-Z][^<>&"]{5,}$/);
    expect(scopeWords('users:emails:read')).toMatch(/e-mail addresses/);
    expect(scopeWords('offline_access')).toMatch(/not using/);
  });

  it('tell the scopes of a request that no one knows, once each, in the order asked', () => {
    expect(unknownScopes('user:read projects:read')).toEqual([]);
    expect(unknownScopes('user:read admin:all user:write admin:all')).toEqual(['admin:all', 'user:write']);
    expect(unknownScopes('')).toEqual([]);
    expect(unknownScopes(undefined)).toEqual([]);
    // Inherited names are no scopes.
    expect(unknownScopes('constructor __proto__ toString')).toEqual(['constructor', '__proto__', 'toString']);
  });
});
