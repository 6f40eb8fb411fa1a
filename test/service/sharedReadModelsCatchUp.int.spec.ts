import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { checkpointName } from '../../projections/readModelVersions';
import { storeFailure } from '../../projections/projectionStatus';
import { SharedReadModelsCatchUp } from '../../service/sharedReadModelsCatchUp';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';

const silent = pino({ level: 'silent' });
const settled = async (promise: Promise<void>): Promise<boolean> => Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 50))]);

describe('waiting for another process to catch the shared read models up', () => {
  it('waits until every projection\'s stored checkpoint reaches the head, saying the lowest meanwhile', async () => {
    const readStore = new MemoryReadStore();
    const shared = new SharedReadModelsCatchUp(readStore, ['users', 'projects'], silent, 5);
    const reached = shared.reach(100n);
    expect(await settled(reached)).toBe(false);
    expect(shared.appliedPosition).toBe(0n);
    await readStore.setCheckpoint('users', 100n);
    await readStore.setCheckpoint(checkpointName('projects'), 60n);
    expect(await settled(reached)).toBe(false);
    expect(shared.appliedPosition).toBe(60n);
    await readStore.setCheckpoint(checkpointName('projects'), 100n);
    await reached;
    expect(shared.appliedPosition).toBe(100n);
  });

  it('leaves out a projection the projections process reports failed, as the read-your-writes waits do', async () => {
    const readStore = new MemoryReadStore();
    await readStore.setCheckpoint('users', 100n);
    await readStore.setCheckpoint(checkpointName('projects'), 40n);
    const shared = new SharedReadModelsCatchUp(readStore, ['users', 'projects'], silent, 5);
    const reached = shared.reach(100n);
    expect(await settled(reached)).toBe(false);
    await storeFailure(readStore, {
      projection: 'projects', position: '41', eventType: 'ProjectCreated', streamId: 'project-1', eventId: 'e', error: 'boom', since: '2026-01-01T00:00:00.000Z', attempts: 1, nextAttempt: null,
    });
    await reached;
  });

  it('fails the start on a store error that is not a passing one', async () => {
    const readStore = new MemoryReadStore();
    const broken = new Proxy(readStore, {
      get: (target, key, receiver) => (key === 'getCheckpoint' ? () => Promise.reject(new Error('disk gone')) : (Reflect.get(target, key, receiver) as unknown)),
    });
    await expect(new SharedReadModelsCatchUp(broken, ['users'], silent, 5).reach(1n)).rejects.toThrow('disk gone');
  });
});
