// The OAuth2 authorization server (issue 27; docs/oauth.md, "Configuration that matters"):
// oidc-provider on our log, mounted on the management API's port by delegation on its own paths.
import type Koa from 'koa';
import { Provider, errors, interactionPolicy, type Configuration, type KoaContextWithOIDC } from './oidcProvider';
import type { Logger } from 'pino';
import { oauthAdapter } from '../../commands/oauth/oauthAdapter';
import { clientSecretMatches } from '../../commands/oauth/oauthClientCommands';
import { API_SCOPES, OAUTH_SCOPES, unknownScopes } from '../../domain/oauth/oauthScopes';
import type { OAuthClientQueries } from '../../projections/oauthClients/oauthClientQueries';
import type { UserQueries } from '../../projections/users/userQueries';
import type { EventStore } from '../../stores/eventstore/eventStore';
import type { OAuthServerKeys } from '../../service/secrets';
import type { OAuthAccess } from '../auth/principal';
import { clientAddress } from '../auth/throttleKeys';
import { WindowedCounts } from '../auth/windowedCounts';
import { escapeHtml, sendPage } from './htmlPage';

export const OAUTH_ROUTES = {
  authorization: '/oauth/auth',
  token: '/oauth/token',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  userinfo: '/oauth/me',
} as const;

/** Where the login and consent pages of an interaction are (our router, not the provider's). */
export const interactionPath = (uid: string): string => `/oauth/interaction/${uid}`;

// The provider's own paths (the interaction pages are ours): everything else passes by. The
// authorization endpoint resumes at `/oauth/auth/{uid}` once an interaction is finished.
const PROVIDER_PATHS = new Set<string>(['/.well-known/openid-configuration', ...Object.values(OAUTH_ROUTES)]);
const isProviderPath = (path: string): boolean => PROVIDER_PATHS.has(path) || /^\/oauth\/auth\/[A-Za-z0-9_-]{1,64}$/.test(path);

/**
 * The authorization endpoint answers anyone, and each request saves an interaction (and a session)
 * in the log: an address may start this many authorizations a window (a person needs one or two; an
 * office behind one address, some hundreds), and beyond it gets a 429 page, appending nothing.
 */
/**
 * OpenID Connect drops `offline_access` from a request without `prompt=consent` (so no refresh
 * token), which OAuth2 clients asking for a refresh token do not expect. Such a request is asked
 * for consent instead: the person sees "keep this access" on the consent page and decides.
 */
function askConsentForOfflineAccess(ctx: Koa.Context): void {
  if (ctx.method !== 'GET' || ctx.path !== OAUTH_ROUTES.authorization) return;
  const url = new URL(ctx.req.url ?? '/', 'http://localhost');
  if (!(url.searchParams.get('scope') ?? '').split(' ').includes('offline_access') || url.searchParams.has('prompt')) return;
  url.searchParams.set('prompt', 'consent');
  ctx.req.url = `${url.pathname}${url.search}`;
}

export const AUTHORIZATION_BUDGET = { perAddress: 300, windowMs: 15 * 60_000, maxAddresses: 20_000 };
const isAuthorizationPath = (path: string): boolean => path === OAUTH_ROUTES.authorization || path.startsWith(`${OAUTH_ROUTES.authorization}/`);

export interface AuthorizationServerDeps {
  publicUrl: string;
  /** Proxies in front of the service whose X-Forwarded-For is believed (the address budget's key). */
  trustedProxyHops: number;
  events: EventStore;
  oauthClients: OAuthClientQueries;
  users: UserQueries;
  keys: OAuthServerKeys;
  log: Logger;
}

export interface AuthorizationServer {
  provider: Provider;
  /** What a Bearer access token grants on the API: null unless it lives, is for the API, and its application and grant do. */
  resolveAccessToken(token: string): Promise<OAuthAccess | null>;
  /** Answers the provider's paths itself; passes every other request on. */
  middleware: Koa.Middleware;
}

export function createAuthorizationServer(deps: AuthorizationServerDeps): AuthorizationServer {
  const issuer = new URL(deps.publicUrl);
  // The routes have no prefix: a path in PUBLIC_URL would put discovery where no client looks.
  if (issuer.pathname !== '/' || issuer.search || issuer.hash) throw new Error(`PUBLIC_URL must have no path for the OAuth server: ${deps.publicUrl}`);
  const issuerUrl = issuer.origin;
  const apiResource = `${issuerUrl}/v1`;

  const policy = interactionPolicy.base();
  // oidc-provider drops scopes it does not know; the issue wants the standard refusal. Thrown from
  // a check, it is redirected to the client's redirect URI, which was validated before.
  policy.get('login')!.checks.add(
    new interactionPolicy.Check('unknown_scope', 'a requested scope is not supported', (ctx: KoaContextWithOIDC) => {
      const unknown = unknownScopes(ctx.oidc.params?.scope as string | undefined);
      if (unknown.length > 0) throw new errors.InvalidScope('requested scope is not supported', unknown.join(' '));
      return false;
    }),
  );

  const configuration: Configuration = {
    adapter: oauthAdapter({
      events: deps.events,
      clients: deps.oauthClients,
      invalidGrant: (description) => new errors.InvalidGrant(description),
      sessionVersion: async (accountId) => (/^\d{1,15}$/.test(accountId) ? ((await deps.users.byId(Number(accountId)))?.sessionVersion ?? null) : null),
    }),
    clients: [],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'RS256',
    },
    scopes: [...OAUTH_SCOPES],
    claims: { openid: ['sub'] },
    pkce: { required: () => true },
    // What registered clients can use, and so all that discovery advertises.
    responseTypes: ['code'],
    clientAuthMethods: ['client_secret_basic'],
    routes: OAUTH_ROUTES,
    features: {
      devInteractions: { enabled: false },
      revocation: {
        enabled: true,
        // RFC 7009 2.1: only the client a token was issued to revokes it (every client here authenticates).
        allowedPolicy: (_ctx, client, token) => {
          if (token.clientId !== client.clientId) throw new errors.InvalidRequest('client is not authorized to revoke the presented token');
          return true;
        },
      },
      introspection: { enabled: false },
      userinfo: { enabled: false },
      // No logout endpoint: tokens do not end with the browser's session, and the session is short (ttl).
      rpInitiatedLogout: { enabled: false },
      // Without a resource server, access tokens carry only OIDC scopes: ours reach them through one resource, the API.
      resourceIndicators: {
        enabled: true,
        defaultResource: () => apiResource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (resource !== apiResource) throw new errors.InvalidTarget();
          return { scope: API_SCOPES.join(' '), accessTokenFormat: 'opaque', accessTokenTTL: 3600 };
        },
      },
    },
    // Revoking any token of a grant ends the grant (the default keeps it for an access token).
    revokeGrantPolicy: () => true,
    // Tokens end with their grant, not with the browser's session at the server.
    expiresWithSession: () => false,
    interactions: { policy, url: (_ctx, interaction) => interactionPath(interaction.uid) },
    cookies: { keys: deps.keys.cookieKeys, long: { signed: true, sameSite: 'lax' }, short: { signed: true, sameSite: 'lax' } },
    jwks: { keys: [deps.keys.signingKey as never] },
    ttl: { AccessToken: 3600, AuthorizationCode: 60, Interaction: 3600, Session: 3600, Grant: 365 * 24 * 3600, RefreshToken: 30 * 24 * 3600, IdToken: 3600 },
    findAccount: async (_ctx, sub) => {
      const user = /^\d{1,15}$/.test(sub) ? await deps.users.byId(Number(sub)) : null;
      if (!user || user.suspended) return undefined;
      return { accountId: sub, claims: () => ({ sub }) };
    },
    // A page for a person: the standard error and its description, nothing internal.
    renderError: (ctx, out) => {
      sendPage(ctx as unknown as Koa.Context, ctx.status, 'Authorization error', `<p>${escapeHtml(String(out.error))}: ${escapeHtml(String(out.error_description ?? ''))}</p>`);
    },
  };
  const provider = new Provider(issuerUrl, configuration);
  // The forwarded headers set below are ours; the client's are dropped before.
  provider.proxy = true;
  // Secrets are stored as their SHA-256 only: the presented one is hashed and compared.
  provider.Client.prototype.compareClientSecret = function compareHashedSecret(this: { clientSecret?: string }, actual: string) {
    return typeof this.clientSecret === 'string' && clientSecretMatches(String(actual), this.clientSecret);
  };
  provider.on('server_error', (_ctx: unknown, error: Error) => deps.log.error({ err: error }, 'OAuth server error'));
  (provider as Koa).on('error', (error: Error) => deps.log.error({ err: error }, 'OAuth request failed'));

  const callback = provider.callback();
  const authorizations = new WindowedCounts(AUTHORIZATION_BUDGET.windowMs, AUTHORIZATION_BUDGET.maxAddresses, Date.now);
  const middleware: Koa.Middleware = async (ctx, next) => {
    if (!isProviderPath(ctx.path)) return next();
    if (isAuthorizationPath(ctx.path)) {
      const spent = authorizations.entry(clientAddress(ctx.request, deps.trustedProxyHops));
      if (spent.count >= AUTHORIZATION_BUDGET.perAddress) {
        ctx.set('Retry-After', String(Math.max(1, Math.ceil((spent.since + AUTHORIZATION_BUDGET.windowMs - Date.now()) / 1000))));
        sendPage(ctx, 429, 'Too many requests', '<p>Too many authorizations from your address. Try again later.</p>');
        return;
      }
      spent.count++;
      askConsentForOfflineAccess(ctx);
    }
    // Its URLs (discovery's endpoints, redirects) are built from the request: always PUBLIC_URL's.
    delete ctx.req.headers['x-forwarded-host'];
    ctx.req.headers.host = issuer.host;
    ctx.req.headers['x-forwarded-proto'] = issuer.protocol.slice(0, -1);
    ctx.respond = false;
    await callback(ctx.req, ctx.res);
  };
  async function resolveAccessToken(token: string): Promise<OAuthAccess | null> {
    // The adapter finds a token only while its grant lives.
    const found = await provider.AccessToken.find(token);
    if (!found || found.isExpired || !found.grantId || !found.clientId || !found.accountId || !/^\d{1,15}$/.test(found.accountId)) return null;
    const audiences = Array.isArray(found.aud) ? found.aud : [found.aud];
    if (!audiences.includes(apiResource)) return null;
    // A deleted application's tokens end at once, before any saga revokes its grants.
    if (!(await deps.oauthClients.live(found.clientId))) return null;
    return { userId: Number(found.accountId), clientId: found.clientId, grantId: found.grantId, scopes: (found.scope ?? '').split(' ').filter((s) => s !== '') };
  }
  return { provider, middleware, resolveAccessToken };
}
