// The api role: the management API (Koa, api/apiApp.ts) and the job websockets on API_PORT.
// Its port opens first, answering 503 "starting" (service/startingGate.ts); `open` puts the API behind
// it once the read models have caught up, so that no command is decided on read models that are behind.
import { readModelQueries } from '../../api/readModelQueries';
import { availableParallelism } from 'node:os';
import http from 'node:http';
import type { Logger } from 'pino';
import { createApiApp } from '../../api/apiApp';
import type { ApiDeps } from '../../api/apiDeps';
import { loadIdentityProviders } from '../../api/auth/identityProviders';
import { LoginThrottle } from '../../api/auth/loginThrottle';
import { ResetRequestThrottle } from '../../api/auth/resetRequestThrottle';
import { TokenService } from '../../api/auth/tokens';
import { answerClientErrors } from '../../http/clientErrors';
import { attachJobSocket, type JobSocketServer } from '../../api/socket/jobSocketServer';
import { queueEmail } from '../../commands/emails/queueEmail';
import { IdAllocator } from '../../commands/idAllocator';
import { ThreadPool } from '../../commands/jobs/threadPool';
import type { ApiKeyUsageRecorder } from '../../commands/projects/projectCommands';
import { UniquenessReservations } from '../../commands/uniqueness';
import type { SampleParser } from '../../ingestion/sampleParser';
import type { ReadModelSync } from '../../projections/projectionRunner';
import type { ProjectionHealth } from '../../projections/projectionStatus';
import type { Stores } from '../composition';
import type { Config } from '../configuration';
import { jwtSecret, oauthServerKeys } from '../secrets';
import { StartingGate, startingApiApp, type StartingState } from '../startingGate';
import { listen, localUrl } from './listen';

/** What the API needs once the read models have caught up. */
export interface ApiOpenDeps {
  stores: Stores;
  sync: ReadModelSync;
  health: ProjectionHealth;
  apiKeyUsage: ApiKeyUsageRecorder;
  /** The sample parser the process shares with the ingestion role (the raw-data view decodes samples). */
  sampleParser(): SampleParser;
}

export interface ApiRole {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Its listener, closed by the service's stop together with the ingestion role's. */
  readonly servers: readonly http.Server[];
  /** Builds the API and serves it from now on. */
  open(deps: ApiOpenDeps): Promise<void>;
  /** Disconnects the job websockets: an open one would keep its server from closing. */
  closeSockets(): Promise<void>;
  /** Once its server is closed: its DSP threads. */
  stop(): Promise<void>;
}

/** Opens API_PORT, answering "starting" until `open`. */
export async function listenApi(deps: { config: Config; log: Logger; starting: StartingState }): Promise<ApiRole> {
  const { config, log } = deps;
  const gate = new StartingGate(startingApiApp(deps.starting, log.child({ role: 'api' })).callback());
  const server = http.createServer(gate.listener);
  answerClientErrors(server, log, (_status, error) => ({ type: 'application/json; charset=utf-8', body: JSON.stringify({ success: false, error }) }));
  const port = await listen(server, config.apiPort, config.host, log);
  let jobSocket: JobSocketServer | undefined;
  let dspPool: ThreadPool | undefined;
  return {
    url: localUrl('http', port),
    servers: [server],
    async open({ stores, sync, health, apiKeyUsage, sampleParser }) {
      const ids = new IdAllocator(stores.events);
      const apiDeps: ApiDeps = {
        events: stores.events,
        blobs: stores.blobs,
        ids,
        reservations: new UniquenessReservations(stores.events, stores.keys),
        ...readModelQueries(stores.events, stores.readStore),
        tokens: new TokenService(await jwtSecret(config), { socketTokenLifetimeSeconds: config.socketTokenTtlSeconds }),
        oauthKeys: await oauthServerKeys(config),
        throttle: new LoginThrottle(),
        resetRequests: new ResetRequestThrottle(),
        apiKeyUsage,
        decodeValues: (bytes, contentType, max) => sampleParser().values(bytes, contentType, max),
        // Two threads: a DSP run is one window, so more would only take cores from the jobs.
        dspPool: (dspPool = new ThreadPool(Math.min(2, availableParallelism()))),
        sendEmail: (email, ctx) => queueEmail({ events: stores.events, ids }, { ...email, projectId: null, from: config.mailFrom }, ctx),
        settings: {
          signupEnabled: config.signupEnabled,
          publicUrl: config.publicUrl ?? `http://localhost:${port}`,
          staffUsernames: config.staffUsernames,
          paymentPortalUrl: config.paymentPortalUrl,
          paymentWebhookSecret: config.paymentWebhookSecret,
          internalApiSecret: config.internalApiSecret,
          identityProviders: await loadIdentityProviders(config.identityProviders),
          supportEmail: config.supportEmail,
          mailFrom: config.mailFrom,
          projectDeletionDelayMs: config.projectDeletionDelayMs,
          trustedProxyHops: config.trustedProxyHops,
        },
      };
      const app = createApiApp(apiDeps, { log: log.child({ role: 'api' }), sync, health, settleTimeoutMs: config.settleTimeoutMs });
      // socket.io wraps the gate's listener, passing it every request outside /socket.io; opened
      // after, so that no job websocket is taken while starting (the upgrade got the starting 503).
      jobSocket = attachJobSocket(server, {
        events: stores.events,
        tokens: apiDeps.tokens.socket,
        access: { users: apiDeps.users, apiKeys: apiDeps.apiKeys, projects: apiDeps.projects, organizations: apiDeps.organizations, settings: apiDeps.settings, health },
        sync,
        settleTimeoutMs: config.settleTimeoutMs,
        log: log.child({ role: 'api', component: 'job-socket' }),
      });
      gate.open(app.callback());
    },
    closeSockets: async () => jobSocket?.close(),
    stop: async () => dspPool?.close(),
  };
}
