// A projection whose version changed has no checkpoint under its new name: at the next start its
// collections are emptied and built again from the whole log, while the others go on from theirs.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { allProjections } from '../../projections';
import { DEVICES } from '../../projections/devices/deviceDocument';
import { ProjectionRunner } from '../../projections/projectionRunner';
import { PROJECTS } from '../../projections/projects/projectDocument';
import { checkpointName } from '../../projections/readModelVersions';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import { sampleLog, snapshot } from '../support/sampleLog';
import { fixedLog } from './fixedLog';

const silent = pino({ level: 'silent' });

async function built(log: ReturnType<typeof fixedLog>, store: MemoryReadStore): Promise<void> {
  const runner = new ProjectionRunner(log, store, allProjections, silent, 10, 10);
  await runner.start();
  await runner.stop();
  expect(await runner.failures()).toEqual([]);
}

describe('read model versions', () => {
  it('name the checkpoint after the version, and keep the plain name for a first version', () => {
    expect(checkpointName('projects')).toBe('projects@v2');
    expect(checkpointName('devices')).toBe('devices');
    expect(checkpointName('jobs')).toBe('jobs@v2');
    expect(allProjections.find((p) => p.name === 'samples')?.checkpoint).toBe('samples@v2');
  });

  it("rebuild a projection whose version changed from empty collections, leaving the others' documents and checkpoints alone", async () => {
    const events = sampleLog();
    const log = fixedLog(events);
    const head = events.at(-1)!.position;
    const fresh = new MemoryReadStore();
    await built(log, fresh);

    // A store written by the version before: the projects documents carried the data summaries,
    // and their checkpoint had the old name; a document the log no longer makes lingers too.
    const identity = await log.identity();
    const upgraded = new MemoryReadStore();
    for (const [name, docs] of Object.entries(await snapshot(fresh))) {
      const older = name === PROJECTS ? [...docs.map((doc) => ({ ...(doc as object), data: { training: { dataCount: 99 } }, _samplesPosition: '9' })), { _id: 999_999, name: 'left over' }] : docs;
      await upgraded.commit(older.map((doc) => ({ kind: 'put' as const, collection: name, doc: doc as { _id: number } })), []);
    }
    for (const p of allProjections) if (p.name !== 'projects') await upgraded.setCheckpoint(p.checkpoint, head, identity);
    await upgraded.setCheckpoint('projects', head, identity);
    // A document of a projection whose version did not change, which no replay would make: it stays
    // as long as that projection is not emptied and replayed too.
    await upgraded.commit([{ kind: 'put', collection: DEVICES, doc: { _id: 'marker', projectId: 0 } }], []);

    await built(log, upgraded);
    expect(await upgraded.collection(DEVICES).findOne({ _id: 'marker' })).toEqual({ _id: 'marker', projectId: 0 });
    await upgraded.collection(DEVICES).deleteOne({ _id: 'marker' });
    expect(await snapshot(upgraded)).toEqual(await snapshot(fresh));
    expect(await upgraded.getCheckpoint('projects@v2')).toBe(head);
  });
});
