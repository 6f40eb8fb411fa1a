// The scopes of the authorization server (docs/oauth.md): the spec's (Authentication rule 4 and the
// operation table) and the two the protocol needs. One list for the provider's configuration, the
// check that refuses unknown scopes, the consent page and the operations' declarations.

export const API_SCOPES = ['user:read', 'projects:read', 'organizations:read', 'users:emails:read'] as const;
export type ApiScope = (typeof API_SCOPES)[number];

export const OAUTH_SCOPES = ['openid', 'offline_access', ...API_SCOPES] as const;
export type OAuthScope = (typeof OAUTH_SCOPES)[number];

const WORDS: Readonly<Record<OAuthScope, string>> = {
  openid: 'Know who you are on this service (your user id)',
  offline_access: 'Keep this access when you are not using the application, until you revoke it',
  'user:read': 'Read your profile and the organizations you belong to',
  'projects:read': 'List your projects',
  'organizations:read': "List a user's organizations",
  'users:emails:read': 'See e-mail addresses',
};

const KNOWN: ReadonlySet<string> = new Set(OAUTH_SCOPES);

export const isOAuthScope = (scope: string): scope is OAuthScope => KNOWN.has(scope);

/** What the consent page says a scope lets the application do. */
export const scopeWords = (scope: OAuthScope): string => WORDS[scope];

/** The scopes of a space-separated `scope` parameter that are none of ours, once each, in the order asked. */
export function unknownScopes(scope: string | undefined): string[] {
  return [...new Set((scope ?? '').split(' ').filter((s) => s !== '' && !isOAuthScope(s)))];
}
