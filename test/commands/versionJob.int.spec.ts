// The version job stands at its request's log position: what the project holds up to there is in
// the version, what lands after it (while the job waits for a worker) is not; a restore rebuilds it
// from the log and checks it against the record.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { versionJobRunner } from '../../commands/versions/versionJob';
import { rebuildVersion } from '../../commands/versions/versionCheck';
import { SampleQueries } from '../../projections/samples/sampleQueries';
import type { JobRunContext } from '../../commands/jobs/jobRunners';
import { checkSample, type SampleDescription } from '../../domain/sample/checkSample';
import { sampleDecider } from '../../domain/sample/sampleDecider';
import { sampleStream } from '../../domain/sample/sampleEvents';
import { fold } from '../../domain/shared/decider';
import type { VersionCreated } from '../../domain/version/versionEvents';
import { allProjections } from '../../projections';
import { historyProjection } from '../../projections/history/historyProjection';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';

const now = new Date('2026-11-25T12:00:00.000Z');
const metadata = { actor: 'system:test', correlationId: 'test', time: now.toISOString() };

function sample(sampleId: number, label: string, content: string): SampleDescription & { sampleId: number } {
  return {
    sampleId, projectId: 10, category: 'training', fileName: `s${sampleId}.json`, label, sha256: content.repeat(64), size: 10,
    contentType: 'application/json', kind: 'time-series', intervalMs: 10, frequency: 100, sensors: [{ name: 'accX', units: 'm/s2' }], valuesCount: 5, totalLengthMs: 50,
    deviceName: null, deviceType: null, width: null, height: null, signatureMethod: 'HS256', signatureValidate: true, signatureKeyId: null,
    metadata: {}, boundingBoxes: [], structuredLabels: [], uploadSource: null,
  };
}

describe('the version job', () => {
  it('records the samples up to its request, not one ingested or deleted after it', async () => {
    const events = Object.assign(SqliteEventStore.open(':memory:'), { isForgotten: async () => false });
    const readStore = new MemoryReadStore();
    const append = (stream: string, list: { type: string; data: Record<string, unknown> }[]) =>
      events.appendToStream(stream, list.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata })), 'any');
    const ingest = (s: ReturnType<typeof sample>) => {
      const { sampleId, ...description } = s;
      return sampleDecider.decide({ type: 'IngestSample', data: { ...checkSample(description), sampleId, ingested: now.toISOString() } }, sampleDecider.initialState());
    };
    const first = ingest(sample(1, 'idle', 'a'));
    await append(sampleStream(1), first);
    await append(sampleStream(2), ingest(sample(2, 'wave', 'b')));
    await append('job-7', [{ type: 'JobRequested', data: { jobId: 7, projectId: 10, organizationId: null, category: 'Create version', categoryKey: 'version', key: '70', parameters: {}, jobNotificationUids: [], createdByUserId: null, created: now.toISOString() } }]);
    // After the request: a third sample, and the first one deleted.
    await append(sampleStream(3), ingest(sample(3, 'wave', 'c')));
    await append(sampleStream(1), sampleDecider.decide({ type: 'DeleteSample', data: { now } }, fold(sampleDecider, first)));
    for await (const event of events.readAll()) {
      for (const p of allProjections) if (p.handles.has(event.type)) await p.apply(event, readStore);
      await readStore.setCheckpoint(historyProjection.checkpoint, event.position);
    }

    const job = { jobId: 7, projectId: 10, organizationId: null, parameters: { versionId: 70, description: 'before', createdByUserId: null }, log: () => {}, signal: new AbortController().signal } as unknown as JobRunContext;
    await versionJobRunner({ events, readStore, history: historyProjection, projections: allProjections.filter((p) => p !== historyProjection), pollMs: 5 })(job);

    const [recorded] = (await events.readStream('versions-10')) as unknown as VersionCreated[];
    const [requested] = await events.readStream('job-7');
    expect(recorded!.data).toMatchObject({ versionId: 70, number: 1, position: requested!.position.toString(), contents: { samples: { count: 2, blobs: ['a'.repeat(64), 'b'.repeat(64)] } } });

    // A restore rebuilds it from the log as recorded; a record that says otherwise is refused, naming the part.
    const deps = { events, readStore, history: historyProjection, projections: allProjections.filter((p) => p !== historyProjection), pollMs: 5 };
    const rebuilt = await rebuildVersion(deps, recorded!.data, new AbortController().signal);
    expect((await new SampleQueries(rebuilt).ids(10, 'all')).map((s) => s.id).sort()).toEqual([1, 2]);
    const tampered = { ...recorded!.data, contents: { ...recorded!.data.contents, samples: { ...recorded!.data.contents.samples, count: 3 }, testAccuracy: 1 } };
    await expect(rebuildVersion(deps, tampered, new AbortController().signal)).rejects.toThrow(/Version 70 of project 10 does not rebuild as recorded: its samples, testAccuracy differ/);
    await events.close();
  });
  it('fails naming the position when the history index does not reach it in time, recording nothing', async () => {
    const events = Object.assign(SqliteEventStore.open(':memory:'), { isForgotten: async () => false });
    await events.appendToStream('job-8', [{ id: randomUUID(), type: 'JobRequested', data: { jobId: 8, projectId: 10 }, metadata }], 'any');
    const job = { jobId: 8, projectId: 10, organizationId: null, parameters: { versionId: 80, description: '', createdByUserId: null }, log: () => {}, signal: new AbortController().signal } as unknown as JobRunContext;
    const run = versionJobRunner({ events, readStore: new MemoryReadStore(), history: historyProjection, projections: [], pollMs: 5, historyTimeoutMs: 50 })(job);
    await expect(run).rejects.toThrow(/history index has not reached log position 1 in 0.05 s/);
    expect(await events.readStream('versions-10')).toEqual([]);
    await events.close();
  });
});
