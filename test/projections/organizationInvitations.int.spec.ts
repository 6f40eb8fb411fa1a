// The organizations read model follows invitations: pending ones carry what the admin typed, an
// accepted one makes a member and closes that person's other invitations, and a deleted invitee
// leaves nothing of what was typed for them.
import { describe, expect, it } from 'vitest';
import { organizationDecider, type OrganizationCommand } from '../../domain/organization/organizationDecider';
import { fold, type DomainEvent } from '../../domain/shared/decider';
import { organizationsProjection } from '../../projections/organizations/organizationsProjection';
import { ORGANIZATIONS, type OrganizationDocument } from '../../projections/organizations/organizationDocument';
import { OrganizationQueries } from '../../projections/organizations/organizationQueries';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import { decided, storedLog } from './fixedLog';

const now = new Date('2026-11-25T12:00:00.000Z');
const ADMIN = 1;
const BOB = 2;
/** A user id no account has: a name typed that named nobody. */
const NOBODY = 900;

const organizationEvents = (...commands: OrganizationCommand[]) => decided(organizationDecider, ...commands);
const stored = (events: DomainEvent[]) => storedLog(events, now);

const invite = (invitationId: number, userId: number, invitedAs: string): OrganizationCommand => ({
  type: 'InviteMember',
  data: { invitationId, userId, invitedAs, role: 'guest', datasets: ['wrists'], invitedByUserId: ADMIN, acceptedOnActivation: false, now },
});
const base = organizationEvents(
  { type: 'CreateOrganization', data: { organizationId: 5, name: 'Labs', isDeveloperProfile: true, ownerUserId: ADMIN, trialId: null, now } },
  invite(20, BOB, 'bob'),
  invite(21, BOB, 'bob@example.com'),
  invite(22, NOBODY, 'nobody'),
);

async function project(events: DomainEvent[], twice = false): Promise<{ doc: OrganizationDocument; store: MemoryReadStore }> {
  const store = new MemoryReadStore();
  for (const e of stored(events)) {
    await organizationsProjection.apply(e, store);
    if (twice) await organizationsProjection.apply(e, store);
  }
  return { doc: (await store.collection<OrganizationDocument>(ORGANIZATIONS).findOne({ _id: 5 }))!, store };
}

describe('the organizations read model', () => {
  it('lists pending invitations with what was typed, and the invitees are not members', async () => {
    const { doc, store } = await project(base);
    expect(doc.memberIds).toEqual([ADMIN]);
    expect(doc.invitations!.map((i) => [i.invitationId, i.userId, i.invitedAs, i.role, i.datasets])).toEqual([
      [20, BOB, 'bob', 'guest', ['wrists']],
      [21, BOB, 'bob@example.com', 'guest', ['wrists']],
      [22, NOBODY, 'nobody', 'guest', ['wrists']],
    ]);
    const queries = new OrganizationQueries(store);
    expect((await queries.invitingUser(BOB)).map((o) => o.id)).toEqual([5]);
    expect(await queries.forMember(BOB)).toEqual([]);
  });

  it("makes a member of one who accepts, with the role and datasets offered, and closes that person's other invitations", async () => {
    const events = [...base, ...organizationDecider.decide({ type: 'AcceptMemberInvitation', data: { invitationId: 21, userId: BOB, now } }, fold(organizationDecider, base as never))];
    const { doc, store } = await project(events);
    expect(doc.members.find((m) => m.userId === BOB)).toMatchObject({ role: 'guest', datasets: ['wrists'], invited: true });
    expect(doc.invitations!.map((i) => i.invitationId)).toEqual([22]);
    expect(doc.invitedUserIds).toEqual([NOBODY]);
    expect((await new OrganizationQueries(store).forMember(BOB)).map((o) => o.id)).toEqual([5]);
    // Applying every event twice gives the same document.
    expect((await project(events, true)).doc).toEqual(doc);
  });

  it('keeps nothing typed for an invitee whose account was deleted, and leaves the others', async () => {
    const deleted: DomainEvent = { type: 'UserDeleted', data: { userId: BOB, deleted: now.toISOString() } };
    const { doc } = await project([...base, deleted]);
    expect(doc.invitations!.map((i) => i.invitedAs)).toEqual(['nobody']);
    expect(doc.invitedUserIds).toEqual([NOBODY]);
    expect((await project([...base, deleted], true)).doc).toEqual(doc);
  });

  it('drops declined and withdrawn invitations', async () => {
    let state = fold(organizationDecider, base as never);
    const answers: DomainEvent[] = [];
    for (const c of [
      { type: 'DeclineMemberInvitation', data: { invitationId: 20, userId: BOB, now } },
      { type: 'WithdrawMemberInvitation', data: { invitationId: 22, withdrawnByUserId: ADMIN, now } },
    ] as OrganizationCommand[]) {
      for (const e of organizationDecider.decide(c, state)) {
        answers.push(e);
        state = organizationDecider.evolve(state, e);
      }
    }
    const { doc } = await project([...base, ...answers]);
    expect(doc.invitations!.map((i) => i.invitationId)).toEqual([21]);
    expect(doc.memberIds).toEqual([ADMIN]);
  });
});
