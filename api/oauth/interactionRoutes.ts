// The authorization server's login and consent pages (issue 27; docs/oauth.md, "Login and consent
// pages"): HTML forms for a person, posted to this origin only. A login goes through the same
// command and throttle as POST /api-login; consent saves the grant oidc-provider asks for.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import Router from '@koa/router';
import type Koa from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { Provider } from './oidcProvider';
import { errors } from './oidcProvider';
import { login } from '../../commands/users/login';
import { isOAuthScope, scopeWords } from '../../domain/oauth/oauthScopes';
import { DomainError } from '../../domain/shared/errors';
import type { ApiDeps } from '../apiDeps';
import { TooManyAttemptsError } from '../auth/loginThrottle';
import { checkCookieRequestOrigin } from '../auth/sameOrigin';
import { accountKey, clientAddress } from '../auth/throttleKeys';
import { requireSwitch, whitelabelOfHost } from '../http/requestWhitelabel';
import { escapeHtml, sendPage } from './htmlPage';

type InteractionDeps = Pick<ApiDeps, 'events' | 'users' | 'throttle' | 'whitelabels' | 'oauthKeys'> & { settings: Pick<ApiDeps['settings'], 'publicUrl' | 'trustedProxyHops'> };

const UID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_FIELD = 1024;

/** A form field as one bounded string ('' when absent or not a string). */
function field(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' && value.length <= MAX_FIELD ? value : '';
}

export function interactionRouter(deps: InteractionDeps, provider: Provider): Router {
  const router = new Router({ prefix: '/oauth/interaction/:uid' });
  // Forms carry a token only this server can make for this interaction, besides the Origin check.
  const csrfToken = (uid: string) => createHmac('sha256', deps.oauthKeys.cookieKeys[0]!).update(`oauth-interaction:${uid}`).digest('base64url');
  const csrfOk = (uid: string, presented: string) => {
    const expected = Buffer.from(csrfToken(uid));
    const given = Buffer.from(presented);
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  const form = koaBody({ urlencoded: true, json: false, text: false, multipart: false, formLimit: '16kb', parsedMethods: [HttpMethodEnum.POST] });

  // The interaction of the browser's cookie, which must be the one in the path.
  async function interactionOf(ctx: Koa.Context) {
    const uid = String(ctx.params.uid);
    if (!UID.test(uid)) throw new errors.InvalidRequest('unknown interaction');
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    if (details.uid !== uid) throw new errors.InvalidRequest('this page belongs to another authorization request');
    return details;
  }

  function checkPost(ctx: Koa.Context): void {
    checkCookieRequestOrigin(ctx, deps.settings.publicUrl);
    if (!csrfOk(String(ctx.params.uid), field(ctx.request.body, 'csrf'))) throw new DomainError('CSRF_TOKEN_INVALID', 'The form is out of date: start again from the application', 403);
  }

  // The application's registered name, for the person to see whom they sign in for.
  const applicationName = async (clientId: unknown): Promise<string> => {
    const client = typeof clientId === 'string' ? await provider.Client.find(clientId) : undefined;
    return client?.clientName ?? String(clientId);
  };

  const loginPage = (ctx: Koa.Context, uid: string, application: string, status: number, message: string, username = '') =>
    sendPage(
      ctx,
      status,
      'Sign in',
      `<p>Sign in to continue to <strong>${escapeHtml(application)}</strong>.</p>` +
        `${message ? `<p role="alert">${escapeHtml(message)}</p>` : ''}<form method="post" action="/oauth/interaction/${escapeHtml(uid)}/login">` +
        `<input type="hidden" name="csrf" value="${csrfToken(uid)}">` +
        `<p><label>Username or e-mail <input name="username" autocomplete="username" required value="${escapeHtml(username)}"></label></p>` +
        `<p><label>Password <input type="password" name="password" autocomplete="current-password" required></label></p>` +
        `<p><label>Authenticator code (only if your account uses one) <input name="totpToken" inputmode="numeric" autocomplete="one-time-code"></label></p>` +
        `<p><button type="submit">Sign in</button></p></form>`,
    );

  async function consentPage(ctx: Koa.Context, uid: string, clientId: string, scope: string): Promise<void> {
    const client = await provider.Client.find(clientId);
    const scopes = [...new Set(scope.split(' '))].filter(isOAuthScope);
    sendPage(
      ctx,
      200,
      'Allow access?',
      `<p><strong>${escapeHtml(client?.clientName ?? clientId)}</strong> asks to:</p><ul>${scopes.map((s) => `<li>${escapeHtml(scopeWords(s))} <code>${escapeHtml(s)}</code></li>`).join('')}</ul>` +
        `<form method="post" action="/oauth/interaction/${escapeHtml(uid)}/consent"><input type="hidden" name="csrf" value="${csrfToken(uid)}">` +
        `<button type="submit" name="decision" value="approve">Allow</button> <button type="submit" name="decision" value="deny">Deny</button></form>`,
    );
  }

  // Errors of these pages are pages too: the standard error's words or our DomainError's message.
  router.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (error instanceof errors.OIDCProviderError) return sendPage(ctx, error.statusCode ?? 400, 'Authorization error', `<p>${escapeHtml(error.error)}: ${escapeHtml(error.error_description ?? '')}</p>`);
      if (error instanceof DomainError) {
        if (error instanceof TooManyAttemptsError) ctx.set('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
        return sendPage(ctx, error.status, 'Authorization error', `<p>${escapeHtml(error.message)}</p>`);
      }
      // The form parser's refusals (too large, unreadable): the client's fault, said as a page.
      const status = (error as { status?: unknown }).status;
      if (typeof status === 'number' && status >= 400 && status < 500) return sendPage(ctx, status, 'Authorization error', '<p>The form could not be read: start again from the application.</p>');
      throw error;
    }
  });

  router.get('/', async (ctx) => {
    const details = await interactionOf(ctx);
    if (details.prompt.name === 'login') return loginPage(ctx, details.uid, await applicationName(details.params.client_id), 200, '');
    if (details.prompt.name === 'consent') return consentPage(ctx, details.uid, String(details.params.client_id), String(details.params.scope ?? ''));
    throw new errors.InvalidRequest('nothing to ask');
  });

  router.post('/login', form, async (ctx) => {
    checkPost(ctx);
    const details = await interactionOf(ctx);
    if (details.prompt.name !== 'login') throw new errors.InvalidRequest('already signed in');
    requireSwitch(await whitelabelOfHost(deps, ctx), 'allowPasswordAuth', 'Signing in with a password');
    const body = ctx.request.body;
    const username = field(body, 'username');
    const address = clientAddress(ctx, deps.settings.trustedProxyHops);
    const user = username ? await deps.users.byUsernameOrEmail(username) : null;
    // The same budget as POST /api-login: one per account and address, whichever door is used.
    const attempt = deps.throttle.begin({ account: accountKey(user, username), address });
    let accountId: string;
    try {
      if (attempt.delayMs > 0) await sleep(attempt.delayMs);
      const outcome = await login(
        deps.events,
        { userId: user?.id ?? null, password: field(body, 'password'), totpToken: field(body, 'totpToken') || undefined, address },
        { actor: user ? `user:${user.id}` : 'anonymous', correlationId: String(ctx.state.requestId ?? ''), now: new Date() },
      );
      if (!outcome.ok) {
        const totpAsked = outcome.passwordWasRight && outcome.error.code === 'TOTP_REQUIRED';
        if (totpAsked) attempt.abandoned();
        else attempt.failed();
        return loginPage(ctx, details.uid, await applicationName(details.params.client_id), 401, totpAsked ? 'Enter the code of your authenticator app, with your password again.' : 'Invalid username, password or code.', username);
      }
      attempt.succeeded();
      accountId = String(outcome.userId);
    } finally {
      attempt.abandoned();
    }
    ctx.respond = false;
    await provider.interactionFinished(ctx.req, ctx.res, { login: { accountId } }, { mergeWithLastSubmission: false });
  });

  router.post('/consent', form, async (ctx) => {
    checkPost(ctx);
    const details = await interactionOf(ctx);
    if (details.prompt.name !== 'consent' || !details.session) throw new errors.InvalidRequest('nothing to consent to');
    const decision = field(ctx.request.body, 'decision');
    if (decision !== 'approve' && decision !== 'deny') throw new errors.InvalidRequest('decision must be approve or deny');
    if (decision === 'deny') {
      ctx.respond = false;
      await provider.interactionFinished(ctx.req, ctx.res, { error: 'access_denied', error_description: 'The user denied the request' }, { mergeWithLastSubmission: false });
      return;
    }
    const clientId = String(details.params.client_id);
    const grant = (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ?? new provider.Grant({ accountId: details.session.accountId, clientId });
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(resource, scopes.join(' '));
    const grantId = await grant.save();
    ctx.respond = false;
    await provider.interactionFinished(ctx.req, ctx.res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  });

  return router;
}
