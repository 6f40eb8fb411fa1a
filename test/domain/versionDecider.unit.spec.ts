import { describe, it } from 'vitest';
import { MAX_RESTORE_SAMPLES, versionDecider, type VersionCommand } from '../../domain/version/versionDecider';
import type { VersionCreated, VersionEvent } from '../../domain/version/versionEvents';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(versionDecider);
const contents: VersionCreated['data']['contents'] = {
  samples: { count: 2, digest: 'a'.repeat(64), blobs: ['b'.repeat(64), 'c'.repeat(64)] },
  impulses: 'd'.repeat(64),
  features: ['e'.repeat(64)],
  models: [{ learnId: 4, type: 'keras', model: 'f'.repeat(64), accuracy: 0.75 }],
  trainingAccuracy: 0.75,
  testAccuracy: null,
};
const record = (data: Partial<Extract<VersionCommand, { type: 'RecordVersion' }>['data']> = {}): VersionCommand => ({
  type: 'RecordVersion',
  data: { projectId: 1, versionId: 10, description: 'first', position: '1234', jobId: 7, contents, createdByUserId: 3, created: '2026-01-01T00:00:00.000Z', ...data },
});
const created = (versionId: number, number: number, extra: Partial<VersionCreated['data']> = {}): VersionEvent => ({
  type: 'VersionCreated',
  data: { projectId: 1, versionId, number, description: 'first', position: '1234', jobId: 7, contents, createdByUserId: 3, created: '2026-01-01T00:00:00.000Z', ...extra },
});
const update = (versionId: number, description: string): VersionCommand => ({ type: 'UpdateVersion', data: { projectId: 1, versionId, description, updated: '2026-01-02T00:00:00.000Z' } });
const remove = (versionId: number): VersionCommand => ({ type: 'DeleteVersion', data: { projectId: 1, versionId, deleted: '2026-01-03T00:00:00.000Z' } });

describe('a project without versions', () => {
  it('records the first version as number 1, at the position and with the contents the job found', () => spec.given([]).when(record()).then([created(10, 1)]));
  it('refuses a record a projection could not serve: a bad hash, a bad position, an accuracy outside 0..1, a description with control characters', () => {
    spec.given([]).when(record({ contents: { ...contents, impulses: 'xyz' } })).thenThrows(ValidationError, /impulses must be a SHA-256/);
    spec.given([]).when(record({ contents: { ...contents, samples: { ...contents.samples, blobs: ['nope'] } } })).thenThrows(ValidationError, /samples.blobs\[0\]/);
    spec.given([]).when(record({ position: '-1' })).thenThrows(ValidationError, /position/);
    spec.given([]).when(record({ contents: { ...contents, trainingAccuracy: 1.5 } })).thenThrows(ValidationError, /trainingAccuracy/);
    spec.given([]).when(record({ contents: { ...contents, models: [{ ...contents.models[0]!, accuracy: Number.NaN }] } })).thenThrows(ValidationError, /models\[0\].accuracy/);
    spec.given([]).when(record({ description: 'a\u0000b' })).thenThrows(ValidationError, /description/);
    spec.given([]).when(record({ description: 'x'.repeat(4097) })).thenThrows(ValidationError, /description/);
  });
  it('refuses to update or delete a version it never had', () => {
    spec.given([]).when(update(10, 'x')).thenThrows(NotFoundError, /Version 10/);
    spec.given([]).when(remove(10)).thenThrows(NotFoundError, /Version 10/);
  });
});

describe('a project with versions', () => {
  it('numbers the next version after the last, and records nothing when a retried job records its version again', () => {
    spec.given([created(10, 1)]).when(record({ versionId: 11 })).then([created(11, 2, {})]);
    spec.given([created(10, 1)]).when(record()).then([]);
  });
  it('updates a version\'s description, and records nothing when it is already that', () => {
    spec.given([created(10, 1)]).when(update(10, 'better')).then([{ type: 'VersionUpdated', data: { projectId: 1, versionId: 10, description: 'better', updated: '2026-01-02T00:00:00.000Z' } }]);
    spec.given([created(10, 1)]).when(update(10, 'first')).then([]);
    spec.given([created(10, 1)]).when(update(10, '\u202e')).thenThrows(ValidationError, /description/);
  });
  it('deletes a version, after which it is unknown, and never gives its number again', () => {
    spec.given([created(10, 1)]).when(remove(10)).then([{ type: 'VersionDeleted', data: { projectId: 1, versionId: 10, deleted: '2026-01-03T00:00:00.000Z' } }]);
    const deleted: VersionEvent = { type: 'VersionDeleted', data: { projectId: 1, versionId: 10, deleted: '2026-01-03T00:00:00.000Z' } };
    spec.given([created(10, 1), deleted]).when(remove(10)).thenThrows(NotFoundError, /Version 10/);
    spec.given([created(10, 1), deleted]).when(update(10, 'x')).thenThrows(NotFoundError, /Version 10/);
    spec.given([created(10, 1), deleted]).when(record({ versionId: 12 })).then([created(12, 2)]);
    spec.given([created(10, 1), deleted]).when(record()).then([]);
  });
});

describe('a restore into a project', () => {
  const plan = { projectId: 2, jobId: 40, sourceProjectId: 1, versionId: 10, position: '1234', sampleIds: [[5, 105], [6, 106]] as [number, number][], impulseIds: [[7, 107]] as [number, number][], blockIds: [[1, 21], [2, 22]] as [number, number][], started: '2026-01-04T00:00:00.000Z' };
  const begin = (data: Partial<typeof plan> = {}, endedJobIds: number[] = []): VersionCommand => ({ type: 'BeginRestore', data: { ...plan, ...data, endedJobIds } });
  const started = (data: Partial<typeof plan> = {}): VersionEvent => ({ type: 'VersionRestoreStarted', data: { ...plan, ...data } });

  it('records its plan: the version it restores and the ids the target gives what it writes', () => spec.given([]).when(begin()).then([started()]));
  it('records nothing when a retried job begins again: its plan is the recorded one', () => spec.given([started()]).when(begin({ sampleIds: [[5, 900]] })).then([]));
  it('refuses to begin while another restore\'s job has not ended, and begins once it has', () => {
    spec.given([started({ jobId: 39 })]).when(begin()).thenThrows(ConflictError, /Restore job 39 is still writing into this project/);
    spec.given([started({ jobId: 39 })]).when(begin({}, [39])).then([started()]);
  });
  it('refuses a restore into the version\'s own project, an id given twice in the target, and ids that are not ids', () => {
    spec.given([]).when(begin({ sourceProjectId: 2 })).thenThrows(ValidationError, /another project/);
    spec.given([]).when(begin({ sampleIds: [[5, 105], [6, 105]] })).thenThrows(ValidationError, /sampleIds: target id 105 is given twice/);
    spec.given([]).when(begin({ blockIds: [[1, -3]] })).thenThrows(ValidationError, /blockIds\[0\]\[1\]/);
    spec.given([]).when(begin({ position: '1e9' })).thenThrows(ValidationError, /position/);
  });
  it('refuses a plan over the sample limit, so its event stays under a store\'s append limit', () => {
    const many = Array.from({ length: MAX_RESTORE_SAMPLES + 1 }, (_, i): [number, number] => [i + 1, i + 1]);
    spec.given([]).when(begin({ sampleIds: many })).thenThrows(ValidationError, /sampleIds: at most 20000/);
  });
});
