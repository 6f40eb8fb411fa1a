import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../service/configuration';

describe('configuration from the environment', () => {
  it('has a default for everything', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ apiPort: 4800, ingestionPort: 4810, ingestionTlsPort: 4811, remoteMgmtPort: 4802, remoteInstanceId: undefined, eventStoreUrl: undefined, mongoUrl: undefined, readStore: 'sqlite', jwtSecret: undefined, logLevel: 'info', signupEnabled: true, shutdownGraceMs: 10_000, uploadIdleTimeoutMs: 30_000 });
    expect(c.dataDir).toMatch(/\/data$/);
    expect([...c.roles]).toEqual(['api', 'ingestion', 'projections', 'sagas', 'jobs', 'remote']);
  });

  it('reads every variable', () => {
    const c = loadConfig({
      API_PORT: '5000', INGESTION_PORT: '5010', INGESTION_TLS_PORT: '5011', DATA_DIR: '/tmp/x', EVENTSTORE_URL: 'esdb://localhost:2113?tls=false',
      MONGO_URL: 'mongodb://localhost:27017', ROLES: 'api, ingestion', JWT_SECRET: 'x'.repeat(32), LOG_LEVEL: 'warn', SIGNUP_ENABLED: 'false',
      SHUTDOWN_GRACE_MS: '2500', UPLOAD_IDLE_TIMEOUT_MS: '45000', REMOTE_MGMT_PORT: '5002', REMOTE_INSTANCE_ID: 'remote-a.1',
    });
    expect(c).toMatchObject({ remoteMgmtPort: 5002, remoteInstanceId: 'remote-a.1' });
    expect(c).toMatchObject({ shutdownGraceMs: 2500, uploadIdleTimeoutMs: 45_000 });
    expect(c).toMatchObject({ apiPort: 5000, ingestionPort: 5010, ingestionTlsPort: 5011, dataDir: '/tmp/x', eventStoreUrl: 'esdb://localhost:2113?tls=false', mongoUrl: 'mongodb://localhost:27017', readStore: 'mongodb', logLevel: 'warn', signupEnabled: false });
    expect([...c.roles]).toEqual(['api', 'ingestion']);
  });

  it('chooses the read store: SQLite embedded, MongoDB with MONGO_URL, or as READ_STORE says', () => {
    expect(loadConfig({}).readStore).toBe('sqlite');
    expect(loadConfig({ MONGO_URL: 'mongodb://db' }).readStore).toBe('mongodb');
    expect(loadConfig({ READ_STORE: 'memory' }).readStore).toBe('memory');
    expect(loadConfig({ READ_STORE: ' SQLite ', MONGO_URL: 'mongodb://db' }).readStore).toBe('sqlite');
  });

  it('lets roles run without projections on a read store other processes share', () => {
    expect([...loadConfig({ ROLES: 'api,ingestion' }).roles]).toEqual(['api', 'ingestion']);
    expect(loadConfig({ ROLES: 'jobs', MONGO_URL: 'mongodb://db' }).readStore).toBe('mongodb');
  });

  it('runs the roles THREAD_ROLES names on a thread, none for none, and by default those that serve no port beside one that does on the embedded stores', () => {
    const threaded = (env: Record<string, string>) => [...loadConfig(env).threadRoles];
    expect(threaded({})).toEqual(['projections', 'sagas', 'jobs']);
    expect(threaded({ ROLES: 'api,projections' })).toEqual(['projections']);
    expect(threaded({ ROLES: 'ingestion,sagas,jobs' })).toEqual(['sagas', 'jobs']);
    // Nothing on a thread where no port is served, where the read store is not SQLite, or with EventStoreDB.
    expect(threaded({ ROLES: 'projections,sagas' })).toEqual([]);
    expect(threaded({ ROLES: 'api,ingestion' })).toEqual([]);
    expect(threaded({ READ_STORE: 'memory' })).toEqual([]);
    expect(threaded({ MONGO_URL: 'mongodb://127.0.0.1:27017' })).toEqual([]);
    expect(threaded({ EVENTSTORE_URL: 'esdb://127.0.0.1:2113?tls=false' })).toEqual([]);
    expect(threaded({ THREAD_ROLES: 'none' })).toEqual([]);
    expect(threaded({ THREAD_ROLES: ' NONE ' })).toEqual([]);
    expect([...loadConfig({ THREAD_ROLES: 'projections, sagas,jobs' }).threadRoles]).toEqual(['projections', 'sagas', 'jobs']);
    expect([...loadConfig({ ROLES: 'api,projections', THREAD_ROLES: 'projections' }).threadRoles]).toEqual(['projections']);
  });

  const bad: [Record<string, string>, RegExp][] = [
    [{ THREAD_ROLES: 'api' }, /THREAD_ROLES.*"api".*projections, sagas, jobs/],
    [{ THREAD_ROLES: 'cron' }, /THREAD_ROLES.*"cron"/],
    [{ ROLES: 'api,projections', THREAD_ROLES: 'sagas' }, /THREAD_ROLES.*"sagas".*ROLES does not name/],
    [{ ROLES: 'projections,sagas', THREAD_ROLES: 'projections,sagas' }, /THREAD_ROLES.*every role/],
    [{ READ_STORE: 'memory', THREAD_ROLES: 'projections' }, /THREAD_ROLES.*READ_STORE/],
    [{ API_PORT: 'eighty' }, /API_PORT/],
    [{ INGESTION_PORT: '70000' }, /INGESTION_PORT/],
    [{ INGESTION_TLS_PORT: '-1' }, /INGESTION_TLS_PORT/],
    [{ EVENTSTORE_URL: 'http://localhost:2113' }, /EVENTSTORE_URL/],
    [{ MONGO_URL: 'localhost:27017' }, /MONGO_URL/],
    [{ ROLES: 'api,cron' }, /ROLES.*cron/],
    [{ ROLES: 'api', READ_STORE: 'memory' }, /ROLES.*READ_STORE/],
    [{ ROLES: 'jobs', READ_STORE: 'memory' }, /ROLES.*READ_STORE/],
    [{ ROLES: 'remote', READ_STORE: 'memory' }, /ROLES.*READ_STORE/],
    [{ REMOTE_MGMT_PORT: '65536' }, /REMOTE_MGMT_PORT/],
    [{ REMOTE_INSTANCE_ID: 'a b' }, /REMOTE_INSTANCE_ID/],
    [{ REMOTE_INSTANCE_ID: 'x'.repeat(65) }, /REMOTE_INSTANCE_ID/],
    [{ READ_STORE: 'postgres' }, /READ_STORE.*sqlite, memory, mongodb/],
    [{ READ_STORE: 'mongodb' }, /READ_STORE.*MONGO_URL/],
    [{ JOB_HEARTBEAT_MS: '10' }, /JOB_HEARTBEAT_MS/],
    [{ SOCKET_TOKEN_TTL_SECONDS: '0' }, /SOCKET_TOKEN_TTL_SECONDS/],
    [{ SOCKET_TOKEN_TTL_SECONDS: '86400' }, /SOCKET_TOKEN_TTL_SECONDS/],
    [{ SHUTDOWN_GRACE_MS: 'soon' }, /SHUTDOWN_GRACE_MS/],
    [{ SHUTDOWN_GRACE_MS: '900000' }, /SHUTDOWN_GRACE_MS/],
    [{ UPLOAD_IDLE_TIMEOUT_MS: '10' }, /UPLOAD_IDLE_TIMEOUT_MS/],
    [{ JWT_SECRET: 'short' }, /JWT_SECRET/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ SIGNUP_ENABLED: 'maybe' }, /SIGNUP_ENABLED/],
    [{ TLS_CERT_FILE: '/tmp/cert.pem' }, /TLS_KEY_FILE/],
    [{ SMTP_URL: 'http://mail' }, /SMTP_URL/],
    [{ SUPPORT_EMAIL: 'support' }, /SUPPORT_EMAIL/],
    [{ MAIL_FROM: 'a@b' }, /MAIL_FROM/],
    [{ PAYMENT_PORTAL_URL: 'ftp://pay' }, /PAYMENT_PORTAL_URL/],
    [{ PAYMENT_WEBHOOK_SECRET: 'short' }, /PAYMENT_WEBHOOK_SECRET/],
    [{ INTERNAL_API_SECRET: 'short' }, /INTERNAL_API_SECRET/],
    [{ SSO_IDENTITY_PROVIDERS: 'not json' }, /SSO_IDENTITY_PROVIDERS/],
    [{ SSO_IDENTITY_PROVIDERS: '[{"name":"x"}]' }, /SSO_IDENTITY_PROVIDERS.*domains/],
  ];
  for (const [env, message] of bad) {
    it(`stops with a message naming the variable for ${JSON.stringify(env)}`, () => {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(message);
    });
  }
});
