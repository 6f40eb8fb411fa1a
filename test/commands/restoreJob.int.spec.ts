// A restore job that dies part way and is run again stores nothing twice: its plan is read back, the
// samples already written are found, the rest written; run once more, it appends nothing at all. What
// changed since the request (a version or project deleted, samples in the target) fails it, unwritten.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { IdAllocator } from '../../commands/idAllocator';
import type { JobRunContext } from '../../commands/jobs/jobRunners';
import { restoreJobRunner } from '../../commands/versions/restoreJob';
import { versionJobRunner } from '../../commands/versions/versionJob';
import { impulseDecider } from '../../domain/impulse/impulseDecider';
import { checkSample, type SampleDescription } from '../../domain/sample/checkSample';
import { sampleDecider } from '../../domain/sample/sampleDecider';
import { sampleStream } from '../../domain/sample/sampleEvents';
import { allProjections } from '../../projections';
import { historyProjection } from '../../projections/history/historyProjection';
import { ImpulseQueries } from '../../projections/impulses/impulseQueries';
import { SampleQueries } from '../../projections/samples/sampleQueries';
import type { EventStore, StoredEvent } from '../../stores/eventstore/eventStore';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import { impulseDeciderAnswering } from '../support/dspRunAnswers';
import { motionImpulse } from '../support/impulseSampleLog';

const now = new Date('2026-11-25T12:00:00.000Z');
const metadata = { actor: 'system:test', correlationId: 'test', time: now.toISOString() };

function sample(sampleId: number, label: string, content: string): SampleDescription & { sampleId: number } {
  return {
    sampleId, projectId: 10, category: 'training', fileName: `s${sampleId}.json`, label, sha256: content.repeat(64), size: 10,
    contentType: 'application/json', kind: 'time-series', intervalMs: 10, frequency: 100, sensors: [{ name: 'accX', units: 'm/s2' }], valuesCount: 5, totalLengthMs: 50,
    deviceName: 'dev', deviceType: null, width: null, height: null, signatureMethod: 'HS256', signatureValidate: true, signatureKeyId: null,
    metadata: { site: 'north', 'a b': 'x' }, boundingBoxes: [], structuredLabels: [{ label, startIndex: 0, endIndex: 4 }], uploadSource: null,
  };
}

const job = (jobId: number, projectId: number, parameters: Record<string, unknown>, signal = new AbortController().signal) =>
  ({ jobId, projectId, organizationId: null, parameters, log: () => {}, signal }) as unknown as JobRunContext;

/** Project 10 with three samples and an impulse, versioned (version 70) by job 7; its read models projected. */
async function versionedSource() {
  const events = Object.assign(SqliteEventStore.open(':memory:'), { isForgotten: async () => false });
  const readStore = new MemoryReadStore();
  const project = async () => {
    const from = await readStore.readCheckpoint(historyProjection.checkpoint);
    for await (const event of events.readAll(from ? { after: from.position } : {})) {
      for (const p of allProjections) if (p.handles.has(event.type)) await p.apply(event, readStore);
      await readStore.setCheckpoint(historyProjection.checkpoint, event.position);
    }
  };
  const append = (stream: string, list: readonly { type: string; data: Record<string, unknown> }[]) =>
    events.appendToStream(stream, list.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata })), 'any');
  // Ids far from the allocator's first block (the log's own samples come from it in the service).
  for (const [id, label, content] of [[1001, 'idle', 'a'], [1002, 'wave', 'b'], [1003, 'wave', 'c']] as const) {
    const { sampleId, ...description } = sample(id, label, content);
    await append(sampleStream(id), sampleDecider.decide({ type: 'IngestSample', data: { ...checkSample(description), sampleId, ingested: now.toISOString() } }, sampleDecider.initialState()));
  }
  const created = impulseDecider.decide({ type: 'SaveImpulse', data: { projectId: 10, impulseId: null, newImpulseId: 5, blocks: motionImpulse(), maxImpulses: 3, now } }, impulseDecider.initialState());
  const configured = impulseDeciderAnswering.decide({ type: 'SetDspConfig', data: { projectId: 10, dspId: 2, changes: { 'scale-axes': '2' }, now } }, created.reduce(impulseDecider.evolve, impulseDecider.initialState()));
  await append('impulses-10', [...created, ...configured]);
  await append('job-7', [{ type: 'JobRequested', data: { jobId: 7, projectId: 10, organizationId: null, category: 'Create version', categoryKey: 'version', key: '70', parameters: {}, jobNotificationUids: [], createdByUserId: null, created: now.toISOString() } }]);
  await project();
  const versionDeps = { events, readStore, history: historyProjection, projections: allProjections.filter((p) => p !== historyProjection), pollMs: 5 };
  await versionJobRunner(versionDeps)(job(7, 10, { versionId: 70, description: 'three samples', createdByUserId: null }));
  await project();
  const restoreDeps = { ...versionDeps, ids: new IdAllocator(events), liveSamples: new SampleQueries(readStore), projects: { byId: async (id: number) => (id === 22 ? null : { collaboratorIds: [5] }) }, apiKeys: { byId: async () => null } };
  const parameters = { sourceProjectId: 10, versionId: 70, maxImpulses: 3, reader: { kind: 'user', userId: 5 } };
  return { events, readStore, project, append, restoreDeps, parameters };
}

describe('the restore job', () => {
  it('writes what the first attempt did not, stores nothing twice, and appends nothing when run again after it succeeded', async () => {
    const { events, readStore, project, restoreDeps, parameters } = await versionedSource();
    // The first attempt dies after two sample appends.
    let appends = 0;
    const dying: EventStore = Object.create(events, {
      appendToStream: { value: async (...args: Parameters<EventStore['appendToStream']>) => {
        if (args[0].startsWith('sample-') && ++appends > 2) throw new Error('the worker died');
        return events.appendToStream(...args);
      } },
    });
    await expect(restoreJobRunner({ ...restoreDeps, events: Object.assign(dying, { isForgotten: async () => false }) })(job(30, 20, parameters))).rejects.toThrow(/the worker died/);
    await project();
    await restoreJobRunner(restoreDeps)(job(30, 20, parameters));
    await project();

    const all: StoredEvent[] = [];
    for await (const e of events.readAll()) all.push(e);
    const target = all.filter((e) => e.data.projectId === 20);
    expect(target.map((e) => e.type).sort()).toEqual(['DspConfigSet', 'ImpulseCreated', 'SampleIngested', 'SampleIngested', 'SampleIngested', 'VersionRestoreStarted']);
    for (const e of target.filter((e) => e.type !== 'VersionRestoreStarted')) expect(e.metadata).toMatchObject({ correlationId: 'restore-30', causationId: all.find((v) => v.type === 'VersionCreated')!.id });
    const restored = (await new SampleQueries(readStore).ids(20, 'all')).map(({ id: _i, _id, _position, projectId: _p, ...rest }) => rest);
    const original = (await new SampleQueries(readStore).ids(10, 'all')).map(({ id: _i, _id, _position, projectId: _p, ...rest }) => rest);
    expect(restored.sort((a, b) => a.fileName.localeCompare(b.fileName))).toEqual(original.sort((a, b) => a.fileName.localeCompare(b.fileName)));
    const [targetImpulse] = await new ImpulseQueries(readStore).forProject(20);
    expect(targetImpulse!.dspConfigs[String(targetImpulse!.dspBlocks[0]!.id)]).toMatchObject({ 'scale-axes': '2' });

    const head = await events.headPosition();
    await restoreJobRunner(restoreDeps)(job(30, 20, parameters));
    expect(await events.headPosition()).toBe(head);
    await events.close();
  });

  it('refuses, appending nothing, access to the source ended, a version, a source or a target deleted since the request, and a target that holds samples by then', async () => {
    const { events, project, append, restoreDeps, parameters } = await versionedSource();
    const head = await events.headPosition();
    await expect(restoreJobRunner({ ...restoreDeps, projects: { byId: async (id: number) => (id === 10 ? null : { collaboratorIds: [] }) } })(job(31, 20, { ...parameters, reader: { kind: 'apiKey', apiKeyId: 3 } }))).rejects.toThrow(/no longer readable/);
    // Access that ended since the request: a collaborator removed, a key revoked.
    await expect(restoreJobRunner(restoreDeps)(job(35, 20, { ...parameters, reader: { kind: 'user', userId: 6 } }))).rejects.toThrow(/Version 70 of project 10 is no longer readable by whoever asked for this restore/);
    const revoked = { apiKeyId: 3, projectId: 10, revoked: true, projectDeleted: false, expires: null };
    await expect(restoreJobRunner({ ...restoreDeps, apiKeys: { byId: async () => revoked as never } })(job(36, 20, { ...parameters, reader: { kind: 'apiKey', apiKeyId: 3 } }))).rejects.toThrow(/no longer readable/);
    const live = { ...revoked, revoked: false };
    await expect(restoreJobRunner({ ...restoreDeps, projects: { byId: async (id: number) => (id === 10 ? null : { collaboratorIds: [] }) }, apiKeys: { byId: async () => live as never } })(job(37, 20, { ...parameters, reader: { kind: 'apiKey', apiKeyId: 3 } }))).rejects.toThrow(/no longer readable/);
    await expect(restoreJobRunner(restoreDeps)(job(34, 22, parameters))).rejects.toThrow(/Project 22 was deleted since the restore was asked for/);
    expect(await events.headPosition()).toBe(head);
    const { sampleId, ...description } = sample(2001, 'idle', 'd');
    await append(sampleStream(2001), sampleDecider.decide({ type: 'IngestSample', data: { ...checkSample({ ...description, projectId: 20 }), sampleId, ingested: now.toISOString() } }, sampleDecider.initialState()));
    await project();
    const withSample = await events.headPosition();
    expect(withSample).not.toBe(head);
    await expect(restoreJobRunner(restoreDeps)(job(32, 20, parameters))).rejects.toThrow(/Project 20 holds samples/);
    expect(await events.headPosition()).toBe(withSample);
    await append('versions-10', [{ type: 'VersionDeleted', data: { projectId: 10, versionId: 70, deleted: now.toISOString() } }]);
    const deleted = await events.headPosition();
    await expect(restoreJobRunner(restoreDeps)(job(33, 21, parameters))).rejects.toThrow(/Version 70 of project 10 no longer exists/);
    expect(await events.headPosition()).toBe(deleted);
    await events.close();
  });
});
