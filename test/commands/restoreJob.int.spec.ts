// A restore job that dies part way and is run again stores nothing twice: its plan is read back, the
// samples already written are found, the rest written; run once more, it appends nothing at all. What
// changed since the request (a version or project deleted, samples in the target) fails it, unwritten.
import { describe, expect, it } from 'vitest';
import { restoreJobRunner } from '../../commands/versions/restoreJob';
import { checkSample } from '../../domain/sample/checkSample';
import { sampleDecider } from '../../domain/sample/sampleDecider';
import { sampleStream } from '../../domain/sample/sampleEvents';
import { ImpulseQueries } from '../../projections/impulses/impulseQueries';
import { SampleQueries } from '../../projections/samples/sampleQueries';
import type { EventStore, StoredEvent } from '../../stores/eventstore/eventStore';
import { job, now, sample, versionedSource } from '../support/versionedSource';

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
