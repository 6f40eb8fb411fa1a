import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../main';

describe('configuration from the environment', () => {
  it('has a default for everything', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ apiPort: 4800, ingestionPort: 4810, ingestionTlsPort: 4811, eventStoreUrl: undefined, mongoUrl: undefined, jwtSecret: undefined, logLevel: 'info', signupEnabled: true });
    expect(c.dataDir).toMatch(/\/data$/);
    expect([...c.roles]).toEqual(['api', 'ingestion', 'projections', 'sagas', 'jobs']);
  });

  it('reads every variable', () => {
    const c = loadConfig({
      API_PORT: '5000', INGESTION_PORT: '5010', INGESTION_TLS_PORT: '5011', DATA_DIR: '/tmp/x', EVENTSTORE_URL: 'esdb://localhost:2113?tls=false',
      MONGO_URL: 'mongodb://localhost:27017', ROLES: 'api, ingestion', JWT_SECRET: 'x'.repeat(32), LOG_LEVEL: 'warn', SIGNUP_ENABLED: 'false',
    });
    expect(c).toMatchObject({ apiPort: 5000, ingestionPort: 5010, ingestionTlsPort: 5011, dataDir: '/tmp/x', eventStoreUrl: 'esdb://localhost:2113?tls=false', mongoUrl: 'mongodb://localhost:27017', logLevel: 'warn', signupEnabled: false });
    expect([...c.roles]).toEqual(['api', 'ingestion']);
  });

  const bad: [Record<string, string>, RegExp][] = [
    [{ API_PORT: 'eighty' }, /API_PORT/],
    [{ INGESTION_PORT: '70000' }, /INGESTION_PORT/],
    [{ INGESTION_TLS_PORT: '-1' }, /INGESTION_TLS_PORT/],
    [{ EVENTSTORE_URL: 'http://localhost:2113' }, /EVENTSTORE_URL/],
    [{ MONGO_URL: 'localhost:27017' }, /MONGO_URL/],
    [{ ROLES: 'api,cron' }, /ROLES.*cron/],
    [{ ROLES: 'api' }, /ROLES.*MONGO_URL/],
    [{ ROLES: 'jobs' }, /ROLES.*MONGO_URL/],
    [{ JOB_HEARTBEAT_MS: '10' }, /JOB_HEARTBEAT_MS/],
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
