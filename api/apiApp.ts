import Router from '@koa/router';
import Koa from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { Logger } from 'pino';
import { DomainError, ValidationError } from '../domain/shared/errors';
import { settler, type ReadModelSync } from '../projections/projectionRunner';
import type { ProjectionHealth } from '../projections/projectionStatus';
import type { ApiDeps } from './apiDeps';
import { PRINCIPAL_MEMO_MS, requireProject } from './auth/principal';
import { accessLog } from '../http/accessLog';
import { jsonEnvelope } from './http/envelope';
import { ANSWER_MEMO_MS, mountOperations, type MountDeps, type Operation } from './http/operation';
import { ReadModelMemo } from './http/readModelMemo';
import { requestId } from '../http/requestId';
import { logRequestErrors } from '../http/requestErrors';
import { unknownMethod } from '../http/clientErrors';
import { onMethods, onPaths } from '../http/passBy';
import { routesBySegments } from '../http/routesBySegments';
import { openApiDocument } from './openApi';
import { accountOperations } from './routes/accountRoutes';
import { userProfileOperations } from './routes/userProfileRoutes';
import { userCredentialOperations } from './routes/userCredentialRoutes';
import { userTotpOperations } from './routes/userTotpRoutes';
import { oauthClientOperations } from './routes/oauthClientRoutes';
import { userSubscriptionOperations } from './routes/userSubscriptionRoutes';
import { userOrganizationOperations } from './routes/userOrganizationRoutes';
import { userSupportOperations } from './routes/userSupportRoutes';
import { internalOperations } from './routes/internalRoutes';
import { invitationOperations } from './routes/invitationRoutes';
import { organizationInvitationOperations } from './routes/organizationInvitationRoutes';
import { organizationOperations } from './routes/organizationRoutes';
import { organizationJobOperations } from './routes/organizationJobRoutes';
import { deploymentOperations } from './routes/deploymentRoutes';
import { restoreOperations } from './routes/restoreRoutes';
import { versionOperations } from './routes/versionRoutes';
import { learnModelDownloadOperations } from './routes/learnModelDownloadRoutes';
import { paymentOperations } from './routes/paymentRoutes';
import { ssoOperations } from './routes/ssoRoutes';
import { whitelabelOperations } from './routes/whitelabelRoutes';
import { projectOperations } from './routes/projectRoutes';
import { projectKeyOperations } from './routes/projectKeyRoutes';
import { collaboratorOperations } from './routes/collaboratorRoutes';
import { deviceOperations } from './routes/deviceRoutes';
import { rawDataOperations } from './routes/rawDataRoutes';
import { impulseOperations } from './routes/impulseRoutes';
import { dspOperations } from './routes/dspRoutes';
import { generateFeaturesOperations } from './routes/generateFeaturesRoutes';
import { kerasTrainingOperations } from './routes/kerasTrainingRoutes';
import { optimizeOperations } from './routes/optimizeRoutes';
import { optimizeJobOperations } from './routes/optimizeJobRoutes';
import { tunerTrialImpulseOperations } from './routes/tunerTrialImpulseRoutes';
import { classifyOperations } from './routes/classifyRoutes';
import { dspFeaturesOperations } from './routes/dspFeaturesRoutes';
import { anomalyTrainingOperations } from './routes/anomalyTrainingRoutes';
import { historyOperations } from './routes/historyRoutes';
import { socketTokenOperations } from './routes/socketTokenRoutes';
import { jobOperations } from './routes/jobRoutes';
import { healthRoute } from '../http/healthRoute';
import { createAuthorizationServer } from './oauth/authorizationServer';
import { interactionRouter } from './oauth/interactionRoutes';
import { serveUserPhoto, userPhotoOperations } from './routes/userPhotoRoutes';

/** The methods whose JSON bodies are parsed. The SDK sends a JSON body with DELETE /api/user. */
const BODY_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;

export interface ApiAppOptions {
  log: Logger;
  sync: ReadModelSync;
  /** How long a write's response may wait for the read models before answering anyway. */
  settleTimeoutMs: number;
  /** What `GET /health` reports: the projections that failed on an event. */
  health: ProjectionHealth;
}

/** Every operation, in matching order: fixed paths before `/api/:projectId`. */
export function allOperations(deps: ApiDeps): Operation[] {
  return [
    ...accountOperations(deps),
    ...ssoOperations(deps),
    ...whitelabelOperations(deps),
    ...internalOperations(deps),
    ...invitationOperations(deps),
    ...organizationInvitationOperations(deps),
    ...paymentOperations(deps),
    ...userPhotoOperations(deps),
    ...userProfileOperations(deps),
    ...userCredentialOperations(deps),
    ...userTotpOperations(deps),
    ...oauthClientOperations(deps),
    ...userSubscriptionOperations(deps),
    ...userOrganizationOperations(deps),
    ...userSupportOperations(deps),
    ...organizationOperations(deps),
    ...organizationJobOperations(deps),
    ...deploymentOperations(deps),
    ...versionOperations(deps),
    ...restoreOperations(deps),
    ...learnModelDownloadOperations(deps),
    ...deviceOperations(deps),
    ...impulseOperations(deps),
    ...dspOperations(deps),
    ...generateFeaturesOperations(deps),
    ...kerasTrainingOperations(deps),
    ...optimizeOperations(deps),
    ...optimizeJobOperations(deps),
    ...tunerTrialImpulseOperations(deps),
    ...classifyOperations(deps),
    ...dspFeaturesOperations(deps),
    ...anomalyTrainingOperations(deps),
    ...socketTokenOperations(deps),
    ...historyOperations(deps),
    ...rawDataOperations(deps),
    ...jobOperations(deps),
    ...projectKeyOperations(deps),
    ...collaboratorOperations(deps),
    ...projectOperations(deps),
  ];
}

export function createApiApp(deps: ApiDeps, options: ApiAppOptions): Koa {
  const app = new Koa({ proxy: false });
  const operations = allOperations(deps);
  const oauth = createAuthorizationServer({ publicUrl: deps.settings.publicUrl, trustedProxyHops: deps.settings.trustedProxyHops, events: deps.events, oauthClients: deps.oauthClients, users: deps.users, keys: deps.oauthKeys, log: options.log });

  const router = apiRouter(deps, operations, {
    // Bounded whatever the traffic: a few thousand principals and answers, some megabytes.
    // A key's expiry is checked apart at every use, so principals too may be renewed by one request at a time.
    auth: {
      ...deps,
      health: options.health,
      oauthTokens: { resolve: oauth.resolveAccessToken },
      memo: {
        apiKeys: new ReadModelMemo(deps.changeMark, { entries: 10_000, bytes: 4 << 20, graceMs: PRINCIPAL_MEMO_MS }),
        users: new ReadModelMemo(deps.changeMark, { entries: 10_000, bytes: 16 << 20, graceMs: PRINCIPAL_MEMO_MS }),
      },
    },
    // Past its second, one request makes an answer anew while the others still get it: not all at once.
    answers: new ReadModelMemo(deps.changeMark, { entries: 2_000, bytes: 32 << 20, graceMs: ANSWER_MEMO_MS }),
    projectAccess: (principal, projectId, access) => requireProject(deps.projects, principal, projectId, access),
    settle: settler(options.sync, options.settleTimeoutMs, options.log),
  });

  app.on('error', logRequestErrors(options.log, 'request failed'));
  // First, so that every answer has it, refusals included: no browser guesses another type from the body.
  app.use((ctx, next) => (ctx.set('X-Content-Type-Options', 'nosniff'), next()));
  app.use(requestId());
  app.use(accessLog(options.log));
  // OAuth's answers are its own (standard errors, HTML pages), and it parses its own bodies.
  app.use(oauth.middleware);
  app.use(onPaths(/^\/oauth\/interaction\//i, interactionRouter(deps, oauth.provider).routes() as Koa.Middleware));
  app.use(jsonEnvelope());
  const parseBody = koaBody({
    jsonLimit: '1mb',
    // Signed bodies (payment notifications) are verified over the bytes as sent.
    includeUnparsed: true,
    multipart: false,
    urlencoded: false,
    text: false,
    parsedMethods: BODY_METHODS.map((m) => HttpMethodEnum[m]),
    onError(error) {
      const status = (error as { status?: number }).status;
      if (status === 413) throw new DomainError('PAYLOAD_TOO_LARGE', 'Request body is too large: at most 1 MB of JSON', 413);
      if (status === 415) throw new DomainError('UNSUPPORTED_ENCODING', 'Unsupported request body encoding', 415);
      throw new ValidationError('Malformed JSON in request body', 'MALFORMED_JSON');
    },
  });
  // Only the methods it parses: for the others (GET above all) it would only check content types.
  app.use(onMethods(BODY_METHODS, parseBody));
  // Outside /v1: not part of the Edge Impulse API, and where probes expect it.
  app.use(onPaths(/^\/health\/?$/i, new Router().get('/health', healthRoute(options.health, options.log)).routes() as Koa.Middleware));
  // Each request is tested only against the routes of its path's segment count (a tenth of them).
  app.use(routesBySegments(router, { throw: true, notImplemented: unknownMethod }));
  return app;
}

/** The routes under `/v1`: the OpenAPI document, user photos and every operation. */
export function apiRouter(deps: ApiDeps, operations: readonly Operation[], mount: MountDeps): Router {
  const router = new Router({ prefix: '/v1' });
  router.get('/openapi.json', (ctx) => {
    ctx.body = openApiDocument(operations);
  });
  // Public, and binary: not an operation of the JSON API.
  router.get('getUserPhoto', '/user-photos/:sha256', serveUserPhoto(deps));
  mountOperations(router, operations, mount);
  return router;
}
