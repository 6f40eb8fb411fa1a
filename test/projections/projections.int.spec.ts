import { describe, expect, it } from 'vitest';
import { allProjections } from '../../projections';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import { sampleLog, snapshot } from '../support/sampleLog';

describe('every projection handler', () => {
  const log = sampleLog();

  it('is exercised by the sample log, so the idempotency checks below cover it', () => {
    const types = new Set(log.map((e) => e.type));
    for (const p of allProjections) for (const t of p.handles) expect(types, `${p.name} handles ${t}`).toContain(t);
  });

  for (const projection of allProjections) {
    for (const type of projection.handles) {
      it(`${projection.name}: ${type} applied twice changes the read model once`, async () => {
        const once = new MemoryReadStore();
        const twice = new MemoryReadStore();
        for (const event of log) {
          if (!projection.handles.has(event.type)) continue;
          await projection.apply(event, once);
          await projection.apply(event, twice);
          if (event.type === type) await projection.apply(event, twice);
        }
        expect(await snapshot(twice)).toEqual(await snapshot(once));
      });
    }

    it(`${projection.name}: replaying the whole log again changes nothing`, async () => {
      const store = new MemoryReadStore();
      for (const event of log) await projection.apply(event, store);
      const first = await snapshot(store);
      for (const event of log) await projection.apply(event, store);
      expect(await snapshot(store)).toEqual(first);
    });
  }

  it('all together: every event applied twice changes the read models once', async () => {
    const once = new MemoryReadStore();
    const twice = new MemoryReadStore();
    for (const event of log) {
      for (const p of allProjections) {
        if (!p.handles.has(event.type)) continue;
        await p.apply(event, once);
        await p.apply(event, twice);
        await p.apply(event, twice);
      }
    }
    const snap = await snapshot(twice);
    expect(snap).toEqual(await snapshot(once));
    // The sample summaries really were kept: one sample left in project 10, its label counted once.
    const summary = snap.projectData!.find((p) => (p as { _id: number })._id === 10) as { data: { training: { dataCount: number; totalLengthMs: number } } };
    expect(summary.data.training).toMatchObject({ dataCount: 1, totalLengthMs: 50 });
    expect(snap.devices).toEqual([expect.objectContaining({ projectId: 10, deviceId: 'dev-1', deviceType: 'TEST', name: 'Bench rig', remoteMgmtConnected: false, remoteMgmtMode: 'disconnected', sensors: [expect.objectContaining({ name: 'Camera (640x480)' })] })]);
  });

  it('builds the read models the API serves from', async () => {
    const store = new MemoryReadStore();
    for (const event of log) for (const p of allProjections) if (p.handles.has(event.type)) await p.apply(event, store);
    const s = await snapshot(store);
    expect(s.users).toEqual([
      expect.objectContaining({ _id: 1, username: 'ada', emailLower: 'ada@example.com', passwordConfigured: true }),
      expect.objectContaining({ _id: 2, username: 'bob' }),
    ]);
    expect(s.projects).toEqual([
      expect.objectContaining({
        _id: 10,
        name: 'Gestures',
        whitelabelId: null,
        ownerOrganizationId: null,
        collaboratorIds: [1],
        developmentApiKey: 'ei_dev_key_for_project_10_0123456789',
        developmentApiKeyId: 103,
        developmentHmacKey: 'fleet-secret',
        readme: { markdown: '# Gestures\n\nData from *wrists*.', html: '<h1>Gestures</h1>\n<p>Data from <em>wrists</em>.</p>\n' },
        // Bob left, so he is no longer notified.
        settings: { trainJobNotificationUids: [1], tags: ['motion'], performance: { useGpu: true } },
        hmacKeys: {
          '101': expect.objectContaining({ id: 101, revoked: true, isDevelopmentKey: false }),
          '104': expect.objectContaining({ id: 104, name: 'Fleet', hmacKey: 'fleet-secret', isDevelopmentKey: true, revoked: false }),
        },
      }),
      // Ada's answered invitations are gone; the last one waits, and shows only the name typed.
      // Made in organization 31 on white label 51's domain; project 12 in organization 31, so in its white label 50.
      expect.objectContaining({ _id: 11, whitelabelId: 51, ownerOrganizationId: 31, collaboratorIds: [2], invitedUserIds: [1], invitations: [{ invitationId: 504, userId: 1, invitedAs: 'ada', invitedByUserId: 2, invited: expect.any(String) }] }),
      expect.objectContaining({ _id: 12, whitelabelId: 50, ownerOrganizationId: 31, deleted: true, fullDeletionDate: expect.any(String), developmentApiKey: null, hmacKeys: {} }),
    ]);
    expect(s.apiKeys).toEqual([
      expect.objectContaining({ _id: 'hash10', projectId: 10, role: 'admin', revoked: false, isDevelopmentKey: false }),
      expect.objectContaining({ _id: 'hash10ci', apiKeyId: 102, role: 'readonly', revoked: true }),
      expect.objectContaining({ _id: 'hash10dev', apiKeyId: 103, isDevelopmentKey: true, lastUsed: expect.any(String) }),
      expect.objectContaining({ _id: 'hash11', projectId: 11 }),
      expect.objectContaining({ _id: 'hash12', projectId: 12, projectDeleted: true }),
    ]);
  });
});
