// The projects read model follows invitations: pending ones are listed with what the inviter typed,
// answered ones leave, and a deleted invitee leaves nothing. Each handler, applied twice, changes
// the read model once.
import { describe, expect, it } from 'vitest';
import { projectDecider, type ProjectCommand } from '../../domain/project/projectDecider';
import type { DomainEvent } from '../../domain/shared/decider';
import { projectsProjection } from '../../projections/projects/projectsProjection';
import { PROJECTS, type ProjectDocument } from '../../projections/projects/projectDocument';
import { ProjectQueries } from '../../projections/projects/projectQueries';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import pino from 'pino';
import { allProjections } from '../../projections';
import { ProjectionRunner } from '../../projections/projectionRunner';
import { sampleLog } from '../support/sampleLog';
import { decided, fixedLog, storedLog } from './fixedLog';

const now = new Date('2026-11-25T12:00:00.000Z');
const OWNER = 1;

const projectEvents = (...commands: ProjectCommand[]) => decided(projectDecider, ...commands);
const stored = (events: DomainEvent[]) => storedLog(events, now);

const create: ProjectCommand = {
  type: 'CreateProject',
  data: { projectId: 10, name: 'P', ownerUserId: OWNER, isPublic: false, developmentApiKey: { id: 1, key: 'ei_k', hash: 'h' }, developmentHmacKey: { id: 2, key: 'm' }, now },
};
const invite = (invitationId: number, userId: number, invitedAs: string): ProjectCommand => ({ type: 'InviteCollaborator', data: { invitationId, userId, invitedAs, invitedByUserId: OWNER, now } });

/** Applies the events (each `times` times) and answers project 10. */
async function project(events: StoredEvent[], times = 1): Promise<ProjectDocument> {
  const store = new MemoryReadStore();
  for (const event of events) for (let i = 0; i < times; i++) await projectsProjection.apply(event, store);
  return (await store.collection<ProjectDocument>(PROJECTS).findOne({ _id: 10 }))!;
}

describe('the projects read model with invitations', () => {
  const log = stored([
    ...projectEvents(
      create,
      invite(20, 2, 'bob'),
      invite(21, 3, 'cy@example.com'),
      invite(22, 4, 'dee'),
      { type: 'AcceptCollaboratorInvitation', data: { invitationId: 20, userId: 2, now } },
      { type: 'DeclineCollaboratorInvitation', data: { invitationId: 22, userId: 4, now } },
      invite(23, 5, 'eve'),
      { type: 'WithdrawCollaboratorInvitation', data: { invitationId: 23, withdrawnByUserId: OWNER, now } },
      invite(24, 6, 'fay'),
    ),
    { type: 'UserDeleted', data: { userId: 3, deleted: now.toISOString() } },
  ]);

  it('keeps pending invitations only, with the name typed, and adds the one who accepted', async () => {
    const doc = await project(log);
    expect(doc.collaboratorIds).toEqual([OWNER, 2]);
    expect(doc.invitedUserIds).toEqual([6]);
    expect(doc.invitations).toEqual([{ invitationId: 24, userId: 6, invitedAs: 'fay', invitedByUserId: OWNER, invited: now.toISOString() }]);
  });

  it('drops the invitation of a user who deleted their account, the e-mail typed with it', async () => {
    const beforeDeletion = await project(log.slice(0, -1));
    expect(beforeDeletion.invitations!.map((i) => i.invitedAs)).toContain('cy@example.com');
    expect(JSON.stringify(await project(log))).not.toContain('cy@example.com');
  });

  it('changes nothing more when every event is applied twice', async () => {
    expect(await project(log, 2)).toEqual(await project(log));
  });

  it('keeps the last modification by a sample ingested before an invitee deleted their account, applied in batches or not', async () => {
    const sample = sampleLog().find((e) => e.type === 'SampleIngested')!;
    const events = stored([
      ...projectEvents(create, invite(21, 3, 'cy@example.com')),
      { type: 'SampleIngested', data: { ...sample.data, projectId: 10 } },
      { type: 'UserDeleted', data: { userId: 3, deleted: now.toISOString() } },
    ]);
    const projectAfter = async (buffered: boolean) => {
      const store = new MemoryReadStore();
      const runner = new ProjectionRunner(fixedLog(events), store, allProjections, pino({ level: 'silent' }), 10, 10, { buffered });
      await runner.start();
      await runner.stop();
      expect(await runner.failures()).toEqual([]);
      return (await new ProjectQueries(store).byId(10))!;
    };
    const oneByOne = await projectAfter(false);
    expect(oneByOne.lastModificationDetails).toMatch(/^Sample .* added$/);
    expect(oneByOne.invitedUserIds).toEqual([]);
    expect(await projectAfter(true)).toEqual(oneByOne);
  });
});
