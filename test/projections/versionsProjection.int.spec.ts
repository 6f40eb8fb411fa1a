import { projectTwice } from '../support/projectTwice';
import { describe, expect, it } from 'vitest';
import type { VersionCreated, VersionEvent } from '../../domain/version/versionEvents';
import { VersionQueries } from '../../projections/versions/versionQueries';

const at = (minute: number) => `2026-11-25T12:${String(minute).padStart(2, '0')}:00.000Z`;
const contents: VersionCreated['data']['contents'] = {
  samples: { count: 12, digest: 'a'.repeat(64), blobs: ['b'.repeat(64)] },
  impulses: 'd'.repeat(64),
  features: [],
  models: [{ learnId: 4, type: 'keras', model: 'f'.repeat(64), accuracy: 0.5 }],
  trainingAccuracy: 0.5,
  testAccuracy: 0.25,
};
const created = (projectId: number, versionId: number, number: number, minute: number): VersionEvent => ({
  type: 'VersionCreated',
  data: { projectId, versionId, number, description: `v${number}`, position: '99', jobId: 7, contents, createdByUserId: 3, created: at(minute) },
});
const updated = (versionId: number, description: string): VersionEvent => ({ type: 'VersionUpdated', data: { projectId: 1, versionId, description, updated: at(30) } });
const deleted = (versionId: number): VersionEvent => ({ type: 'VersionDeleted', data: { projectId: 1, versionId, deleted: at(40) } });

/** Applies the events in order, each one twice (at-least-once delivery), through every projection. */
async function project(events: VersionEvent[]): Promise<VersionQueries> {
  return new VersionQueries(await projectTwice(events.map((e) => ({ ...e, streamId: `versions-${e.data.projectId}` }))));
}

describe('the versions read model', () => {
  it('lists a project\'s versions newest first with their numbers, metrics and sample count, and the next number', async () => {
    const q = await project([created(1, 10, 1, 1), created(1, 11, 2, 2), created(2, 12, 1, 3)]);
    const list = await q.forProject(1);
    expect(list.map((v) => [v.versionId, v.number, v.description])).toEqual([[11, 2, 'v2'], [10, 1, 'v1']]);
    expect(list[0]).toMatchObject({ created: at(2), createdByUserId: 3, trainingAccuracy: 0.5, testAccuracy: 0.25, totalSamplesCount: 12, position: '99' });
    expect(await q.nextNumber(1)).toBe(3);
    expect(await q.nextNumber(3)).toBe(1);
  });

  it('shows an updated description, and drops a deleted version while its number stays taken', async () => {
    const q = await project([created(1, 10, 1, 1), created(1, 11, 2, 2), updated(10, 'renamed'), deleted(11)]);
    expect((await q.forProject(1)).map((v) => [v.versionId, v.description])).toEqual([[10, 'renamed']]);
    expect(await q.byId(1, 11)).toBeNull();
    expect(await q.byId(2, 10)).toBeNull();
    expect(await q.byId(1, 10)).toMatchObject({ number: 1, contents });
    expect(await q.nextNumber(1)).toBe(3);
  });
});
