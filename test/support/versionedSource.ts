// A source project for the version and restore specs: project 10 with three samples (ids far from the
// allocator's first block) and an impulse with a DSP config, versioned (version 70) by job 7, its read
// models projected by `project()` as the projections role would.
import { randomUUID } from 'node:crypto';
import { IdAllocator } from '../../commands/idAllocator';
import type { JobRunContext } from '../../commands/jobs/jobRunners';
import { versionJobRunner } from '../../commands/versions/versionJob';
import { impulseDecider } from '../../domain/impulse/impulseDecider';
import { checkSample, type SampleDescription } from '../../domain/sample/checkSample';
import { sampleDecider } from '../../domain/sample/sampleDecider';
import { sampleStream } from '../../domain/sample/sampleEvents';
import { allProjections } from '../../projections';
import { historyProjection } from '../../projections/history/historyProjection';
import { SampleQueries } from '../../projections/samples/sampleQueries';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import { impulseDeciderAnswering } from './dspRunAnswers';
import { motionImpulse } from './impulseSampleLog';

export const now = new Date('2026-11-25T12:00:00.000Z');
const metadata = { actor: 'system:test', correlationId: 'test', time: now.toISOString() };

export function sample(sampleId: number, label: string, content: string): SampleDescription & { sampleId: number } {
  return {
    sampleId, projectId: 10, category: 'training', fileName: `s${sampleId}.json`, label, sha256: content.repeat(64), size: 10,
    contentType: 'application/json', kind: 'time-series', intervalMs: 10, frequency: 100, sensors: [{ name: 'accX', units: 'm/s2' }], valuesCount: 5, totalLengthMs: 50,
    deviceName: 'dev', deviceType: null, width: null, height: null, signatureMethod: 'HS256', signatureValidate: true, signatureKeyId: null,
    metadata: { site: 'north', 'a b': 'x' }, boundingBoxes: [], structuredLabels: [{ label, startIndex: 0, endIndex: 4 }], uploadSource: null,
  };
}

export const job = (jobId: number, projectId: number, parameters: Record<string, unknown>, signal = new AbortController().signal) =>
  ({ jobId, projectId, organizationId: null, parameters, log: () => {}, signal }) as unknown as JobRunContext;

/** Project 10 with three samples and an impulse, versioned (version 70) by job 7; its read models projected. */
export async function versionedSource() {
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
  return { events, readStore, project, append, versionDeps, restoreDeps, parameters };
}

