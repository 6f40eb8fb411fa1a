import { describe, expect, it } from 'vitest';
import type { ApiKeyDocument } from '../../projections/apiKeys/apiKeyDocument';
import type { ProjectionHealth } from '../../projections/projectionStatus';
import type { ProjectQueries } from '../../projections/projects/projectQueries';
import { authenticateHello, samplingHmacKey } from '../../remote/helloAuthentication';

const now = new Date('2026-11-28T10:00:00.000Z');
type Project = NonNullable<Awaited<ReturnType<ProjectQueries['byId']>>>;

// Fakes of the two read-model lookups: keys by value, projects by id.
const keys: Record<string, Pick<ApiKeyDocument, 'apiKeyId' | 'projectId' | 'role'>> = {
  ei_deploy: { apiKeyId: 1, projectId: 3, role: 'ingestion_deployment' },
  ei_admin: { apiKeyId: 2, projectId: 3, role: 'admin' },
  ei_read: { apiKeyId: 3, projectId: 3, role: 'readonly' },
  ei_ingest: { apiKeyId: 4, projectId: 3, role: 'ingestiononly' },
  ei_orphan: { apiKeyId: 5, projectId: 99, role: 'admin' },
};
const deps = (stalled = false) => ({
  apiKeys: { live: async (k: string) => (keys[k] ?? null) as ApiKeyDocument | null },
  projects: { byId: async (id: number) => (id === 3 ? ({ id: 3 } as Project) : null) },
  health: { failures: async () => [], stall: () => (stalled ? ({} as never) : undefined) } as ProjectionHealth,
});

describe('a hello\'s API key', () => {
  it('of role ingestion_deployment or admin connects the device to its project', async () => {
    expect(await authenticateHello('ei_deploy', deps(), now)).toEqual({ ok: true, projectId: 3, apiKeyId: 1 });
    expect(await authenticateHello('ei_admin', deps(), now)).toEqual({ ok: true, projectId: 3, apiKeyId: 2 });
  });

  it('of another role is refused, naming the role', async () => {
    expect(await authenticateHello('ei_read', deps(), now)).toEqual({ ok: false, auth: false, reason: 'An API key with role "readonly" cannot connect a device' });
    expect(await authenticateHello('ei_ingest', deps(), now)).toMatchObject({ ok: false, auth: false });
  });

  it('unknown, or of a project gone, is refused', async () => {
    expect(await authenticateHello('ei_nope', deps(), now)).toEqual({ ok: false, auth: false, reason: 'Invalid API key' });
    expect(await authenticateHello('ei_orphan', deps(), now)).toEqual({ ok: false, auth: false, reason: 'Invalid API key: its project no longer exists' });
  });

  it('unknown while the read models stand still: try again, not a refusal', async () => {
    expect(await authenticateHello('ei_nope', deps(true), now)).toMatchObject({ ok: false, retry: true });
    // A known key of a wrong role is refused even then: waiting will not change its role.
    expect(await authenticateHello('ei_read', deps(true), now)).toMatchObject({ ok: false, auth: false });
  });
});

describe('the HMAC key of a sample request', () => {
  const entry = (id: number, hmacKey: string, revoked = false) => ({ id, name: `k${id}`, hmacKey, isDevelopmentKey: false, created: now.toISOString(), createdByUserId: 1, revoked });
  it('is the oldest live one, or none', () => {
    expect(samplingHmacKey({ hmacKeys: { b: entry(7, 'seven'), a: entry(2, 'two', true), c: entry(5, 'five') } })).toBe('five');
    expect(samplingHmacKey({ hmacKeys: { a: entry(2, 'two', true) } })).toBeUndefined();
    expect(samplingHmacKey({ hmacKeys: {} })).toBeUndefined();
  });
});
