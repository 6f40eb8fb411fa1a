import { readModelQueries } from '../../api/readModelQueries';
import { randomUUID } from 'node:crypto';
import { duplexPair } from 'node:stream';
import http from 'node:http';
import type Koa from 'koa';
import pino from 'pino';
import { createApiApp } from '../../api/apiApp';
import type { ApiDeps, ApiSettings } from '../../api/apiDeps';
import { DEFAULT_THROTTLE, LoginThrottle, type Attempt, type ThrottleKey } from '../../api/auth/loginThrottle';
import { ResetRequestThrottle } from '../../api/auth/resetRequestThrottle';
import { TokenService } from '../../api/auth/tokens';
import { queueEmail } from '../../commands/emails/queueEmail';
import { IdAllocator } from '../../commands/idAllocator';
import { ThreadPool } from '../../commands/jobs/threadPool';
import { ApiKeyUsageRecorder } from '../../commands/projects/projectCommands';
import { UniquenessReservations } from '../../commands/uniqueness';
import { sealedFieldsByEventType } from '../../domain/personalData';
import type { DomainEvent } from '../../domain/shared/decider';
import { SampleParser } from '../../ingestion/sampleParser';
import { allProjections } from '../../projections';
import { ProjectionRunner } from '../../projections/projectionRunner';
import { SqliteBlobStore } from '../../stores/blobstore/sqliteBlobStore';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { SealingEventStore } from '../../stores/keystore/sealingEventStore';
import { SqliteKeyStore } from '../../stores/keystore/sqliteKeyStore';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import { signup } from './signup';
import { generateKeyPairSync } from 'node:crypto';
import type { OAuthServerKeys } from '../../service/secrets';

// One RSA key for every route spec of a test file: making one takes a while and none is kept.
const TEST_OAUTH_KEYS: OAuthServerKeys = {
  cookieKeys: ['route-spec-oauth-cookie-key'],
  signingKey: { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), kid: 'route-spec', use: 'sig', alg: 'RS256' } as OAuthServerKeys['signingKey'],
};

/**
 * A route's behaviour, given / when / then, without booting the service: the API app over an
 * in-memory log (SQLite `:memory:`, sealed like the service's) and a memory read store that the real
 * projections fill. Requests go to the Koa app through an in-memory socket pair, with no port and no
 * data folder; no sagas, job worker or ingestion run. Given events are appended and projected before
 * the request; the answer and the events the request appended are what a test looks at.
 *
 * Time: the throttles run on a virtual clock, and their waits advance it instead of sleeping, so
 * a test of a 3 s back-off takes no time and `Answer.ms` is the virtual time the request took.
 */
export interface RouteSpec {
  deps: ApiDeps;
  /** Appends events to a stream (as its next events) and waits until the read models show them. */
  given(stream: string, events: DomainEvent[]): Promise<void>;
  /** One HTTP request to `/v1<pathname>`, from `from` (the socket's peer address; 127.0.0.1 unless told). */
  request(method: string, pathname: string, options?: RequestOptions): Promise<Answer>;
  /** The events appended since the spec began, or since `mark()`. */
  appended(): Promise<StoredEvent[]>;
  /** Later `appended()` calls show only what came after now. */
  mark(): Promise<void>;
  /** Waits until the read models applied every event in the log so far. */
  caughtUp(): Promise<void>;
  /** Milliseconds on the virtual clock the throttles read. */
  now(): number;
  close(): Promise<void>;
}

export interface RequestOptions {
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  from?: string;
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: http.IncomingHttpHeaders;
  /** Virtual milliseconds between the request and its answer (the throttles' waits). */
  ms: number;
  /** The virtual clock when the answer arrived. */
  at: number;
}

export const SPEC_SETTINGS: ApiSettings = {
  signupEnabled: true,
  publicUrl: 'http://studio.test',
  staffUsernames: new Set(),
  paymentPortalUrl: 'https://pay.test/checkout',
  paymentWebhookSecret: undefined,
  internalApiSecret: undefined,
  identityProviders: [],
  supportEmail: 'support@studio.test',
  mailFrom: 'Studio <no-reply@studio.test>',
  projectDeletionDelayMs: 7 * 24 * 3600_000,
  trustedProxyHops: 0,
};

/** Time that moves only when a throttle's delay passes: parallel delays from one moment end together, as real ones would. */
class VirtualClock {
  private t = Date.now();
  readonly now = (): number => this.t;
  advanceTo(t: number): void {
    this.t = Math.max(this.t, t);
  }
}

export async function routeSpec(options: { settings?: Partial<ApiSettings> } = {}): Promise<RouteSpec> {
  const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const raw = SqliteEventStore.open(':memory:');
  const keys = SqliteKeyStore.open(':memory:');
  const events = new SealingEventStore(raw, keys, sealedFieldsByEventType);
  const readStore = new MemoryReadStore();
  const blobs = SqliteBlobStore.open(':memory:');
  const projections = new ProjectionRunner(events, readStore, allProjections, log);
  await projections.start();
  const clock = new VirtualClock();
  // A guess's delay passes on the virtual clock at once: the route (or guard) then waits 0 ms for real.
  const throttle = new (class extends LoginThrottle {
    override begin(key: ThrottleKey): Attempt {
      const attempt = super.begin(key);
      clock.advanceTo(clock.now() + attempt.delayMs);
      return { ...attempt, delayMs: 0 };
    }
  })(DEFAULT_THROTTLE, clock.now);
  const ids = new IdAllocator(events);
  let parser: SampleParser | undefined;
  let dspPool: ThreadPool | undefined;
  const deps: ApiDeps = {
    events,
    blobs,
    ids,
    reservations: new UniquenessReservations(events, keys),
    ...readModelQueries(events, readStore),
    tokens: new TokenService('route-spec-jwt-secret-0123456789abcdef'),
    oauthKeys: TEST_OAUTH_KEYS,
    throttle,
    resetRequests: new ResetRequestThrottle(undefined, clock.now),
    apiKeyUsage: new ApiKeyUsageRecorder(events, (error) => log.error({ err: error }, 'recording an API key use failed')),
    decodeValues: (bytes, contentType, max) => (parser ??= new SampleParser()).values(bytes, contentType, max),
    // Made on first use: only the DSP routes run on it.
    get dspPool() {
      return (dspPool ??= new ThreadPool(1));
    },
    sendEmail: (email, ctx) => queueEmail({ events, ids }, { ...email, projectId: null, from: SPEC_SETTINGS.mailFrom }, ctx),
    settings: { ...SPEC_SETTINGS, ...options.settings },
  };
  const app: Koa = createApiApp(deps, { log, sync: projections, health: projections, settleTimeoutMs: 10_000 });
  const server = http.createServer(app.callback());
  let since = await events.headPosition();

  const caughtUp = async () => {
    const head = await events.headPosition();
    if (head !== undefined && !(await projections.waitFor(head, 10_000))) throw new Error(`the read models did not reach ${head}`);
  };

  return {
    deps,
    async given(stream, given) {
      const time = new Date(clock.now()).toISOString();
      const stored = given.map((e) => ({ id: randomUUID(), type: e.type, data: e.data as Record<string, unknown>, metadata: { actor: 'system:given', correlationId: 'given', time } }));
      await events.appendToStream(stream, stored, 'any');
      await caughtUp();
    },
    request: (method, pathname, requestOptions = {}) => inject(server, clock, method, `/v1${pathname}`, requestOptions),
    async appended() {
      const all: StoredEvent[] = [];
      for await (const event of events.readAll(since === undefined ? {} : { after: since })) all.push(event);
      return all;
    },
    async mark() {
      since = await events.headPosition();
    },
    caughtUp,
    now: clock.now,
    async close() {
      await projections.stop();
      await parser?.close();
      await dspPool?.close();
      await Promise.allSettled([events.close(), keys.close(), blobs.close(), readStore.close()]);
    },
  };
}

/** Signs a user up (e-mail `<username>@example.com`, the test password) and logs them in. */
export async function registerUser(spec: RouteSpec, username: string): Promise<{ id: number; token: string }> {
  const created = await spec.request('POST', '/api-user-create', { body: signup({ username, email: `${username}@example.com` }) });
  if (created.status !== 200) throw new Error(`sign-up of ${username} answered ${created.status}: ${JSON.stringify(created.body)}`);
  const login = await spec.request('POST', '/api-login', { body: { username, password: 'correct horse battery' } });
  if (login.status !== 200) throw new Error(`login of ${username} answered ${login.status}: ${JSON.stringify(login.body)}`);
  return { id: Number(created.body.id), token: String(login.body.token) };
}

/** An HTTP/1.1 exchange with `server` over an in-memory socket pair: the server's parser and Koa run as for a real client. */
function inject(server: http.Server, clock: VirtualClock, method: string, path: string, options: RequestOptions): Promise<Answer> {
  const [client, serverSide] = duplexPair();
  // What Koa reads as ctx.ip; a real socket's peer.
  Object.defineProperty(serverSide, 'remoteAddress', { value: options.from ?? '127.0.0.1' });
  server.emit('connection', serverSide);
  const body = options.rawBody ?? (options.body !== undefined ? JSON.stringify(options.body) : undefined);
  const started = clock.now();
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        method,
        path,
        createConnection: () => client as never,
        headers: { host: 'studio.test', 'content-type': 'application/json', ...(body !== undefined ? { 'content-length': Buffer.byteLength(body) } : {}), ...options.headers },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('error', reject);
        response.on('end', () => {
          client.destroy();
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: Record<string, unknown>;
          try {
            parsed = JSON.parse(text) as Record<string, unknown>;
          } catch {
            parsed = { unparsed: text };
          }
          resolve({ status: response.statusCode ?? 0, body: parsed, headers: response.headers, ms: clock.now() - started, at: clock.now() });
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
