import type { DomainEvent } from '../shared/decider';

/**
 * What oidc-provider persists through its adapter, but clients (their own aggregate): docs/oauth.md,
 * "Persistence". One stream per artifact.
 */
export const OAUTH_ARTIFACT_KINDS = ['Session', 'Interaction', 'AuthorizationCode', 'AccessToken', 'RefreshToken', 'Grant'] as const;
export type OAuthArtifactKind = (typeof OAUTH_ARTIFACT_KINDS)[number];

const STREAM_PREFIX: Readonly<Record<OAuthArtifactKind, string>> = {
  Session: 'oauth-session',
  Interaction: 'oauth-interaction',
  AuthorizationCode: 'oauth-code',
  AccessToken: 'oauth-access-token',
  RefreshToken: 'oauth-refresh-token',
  Grant: 'oauth-grant',
};

/**
 * The stream of one artifact, named after the SHA-256 (base64url) of its id: the id of a code, a
 * token or a session is what its holder presents, so the log must not hold it.
 */
export const oauthArtifactStream = (kind: OAuthArtifactKind, idHash: string): string => `${STREAM_PREFIX[kind]}-${idHash}`;

/** Created or changed (oidc-provider's `upsert`). `payload` is oidc-provider's, without `jti` (the id). */
export type OAuthArtifactSaved = DomainEvent<'OAuthArtifactSaved', { kind: OAuthArtifactKind; payload: Record<string, unknown>; expires: string }>;

/** A code or refresh token used (`consume`): a second use is a replay. */
export type OAuthArtifactConsumed = DomainEvent<'OAuthArtifactConsumed', { kind: OAuthArtifactKind; consumed: string }>;

/**
 * Why the service, not the user, ended a grant: its access had already ended (the client or the
 * account gone, the password changed), and the grant's end records it (commands/oauth/oauthGrantEndings.ts).
 */
export const OAUTH_GRANT_END_CAUSES = ['client-deleted', 'password-changed', 'account-deleted'] as const;
export type OAuthGrantEndCause = (typeof OAUTH_GRANT_END_CAUSES)[number];

/**
 * Gone for good (`destroy`; `revoked` for a grant ended by `revokeByGrantId`, which ends its tokens
 * with it). `cause` is set when the service ended it for one of OAUTH_GRANT_END_CAUSES.
 */
export type OAuthArtifactEnded = DomainEvent<
  'OAuthArtifactEnded',
  { kind: OAuthArtifactKind; reason: 'destroyed' | 'revoked'; cause?: OAuthGrantEndCause; ended: string }
>;

export type OAuthArtifactEvent = OAuthArtifactSaved | OAuthArtifactConsumed | OAuthArtifactEnded;
