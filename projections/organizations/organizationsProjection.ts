import type { OrganizationEvent } from '../../domain/organization/organizationEvents';
import type { UserDeleted } from '../../domain/user/userEvents';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import type { ReadStore } from '../../stores/readstore/readStore';
import { defineProjection, insertOnce, positionKey, updateOnce } from '../projection';
import {
  ORGANIZATION_API_KEYS,
  ORGANIZATIONS,
  type OrganizationApiKeyDocument,
  type OrganizationDocument,
  type OrganizationInvitationEntry,
  type OrganizationMemberEntry,
} from './organizationDocument';

const organizations = (store: ReadStore) => store.collection<OrganizationDocument>(ORGANIZATIONS);
const keys = (store: ReadStore) => store.collection<OrganizationApiKeyDocument>(ORGANIZATION_API_KEYS);

/** Rewrites the member list at this event's position (a replayed event finds the document past it). */
async function updateMembers(store: ReadStore, event: StoredEvent, organizationId: number, change: (members: OrganizationMemberEntry[]) => OrganizationMemberEntry[]): Promise<void> {
  const doc = await organizations(store).findOne({ _id: organizationId });
  if (!doc || doc._position >= positionKey(event.position)) return;
  const members = change(doc.members);
  await updateOnce(organizations(store), organizationId, { $set: { members, memberIds: members.map((m) => m.userId) } }, event);
}

const invitationFields = (invitations: OrganizationInvitationEntry[]) => ({ invitations, invitedUserIds: [...new Set(invitations.map((i) => i.userId))] });

/** Rewrites the pending invitations at this event's position. */
async function updateInvitations(store: ReadStore, event: StoredEvent, organizationId: number, change: (invitations: OrganizationInvitationEntry[]) => OrganizationInvitationEntry[]): Promise<void> {
  const doc = await organizations(store).findOne({ _id: organizationId });
  if (!doc || doc._position >= positionKey(event.position)) return;
  await updateOnce(organizations(store), organizationId, { $set: invitationFields(change(doc.invitations ?? [])) }, event);
}

export const organizationsProjection = defineProjection<OrganizationEvent | UserDeleted>('organizations', [ORGANIZATIONS, ORGANIZATION_API_KEYS], {
  async OrganizationCreated(event, store) {
    const d = event.data;
    await insertOnce(
      organizations(store),
      {
        _id: d.organizationId,
        id: d.organizationId,
        name: d.name,
        isDeveloperProfile: d.isDeveloperProfile,
        ownerUserId: d.ownerUserId,
        members: [{ userId: d.ownerUserId, role: 'admin', datasets: [], added: d.created, invited: false }],
        memberIds: [d.ownerUserId],
        invitations: [],
        invitedUserIds: [],
        trialId: d.trialId,
        readme: '',
        showHeaderImgMask: false,
        experiments: [],
        created: d.created,
        deletedDate: null,
        _position: '',
      },
      event,
    );
  },

  async OrganizationUpdated(event, store) {
    await updateOnce(organizations(store), event.data.organizationId, { $set: { ...event.data.changes } }, event);
  },

  async OrganizationDeleted(event, store) {
    const position = positionKey(event.position);
    await updateOnce(organizations(store), event.data.organizationId, { $set: { deletedDate: event.data.deletedDate } }, event);
    // Its keys stop working at once.
    await keys(store).updateMany({ organizationId: event.data.organizationId, _position: { $lt: position } }, { $set: { organizationDeleted: true, _position: position } });
  },

  async OrganizationMemberAdded(event, store) {
    const d = event.data;
    const doc = await organizations(store).findOne({ _id: d.organizationId });
    if (!doc || doc._position >= positionKey(event.position)) return;
    // As in the decider: a member's other invitations (other names typed for them) close.
    const members = [...doc.members, { userId: d.userId, role: d.role, datasets: d.datasets, added: d.added, invited: d.invited }];
    const invitations = (doc.invitations ?? []).filter((i) => i.userId !== d.userId);
    await updateOnce(organizations(store), d.organizationId, { $set: { members, memberIds: members.map((m) => m.userId), ...invitationFields(invitations) } }, event);
  },

  async OrganizationMemberInvited(event, store) {
    const d = event.data;
    const entry: OrganizationInvitationEntry = {
      invitationId: d.invitationId,
      userId: d.userId,
      invitedAs: d.invitedAs,
      role: d.role,
      datasets: d.datasets,
      invitedByUserId: d.invitedByUserId,
      acceptedOnActivation: d.acceptedOnActivation,
      invited: d.invited,
    };
    await updateInvitations(store, event, d.organizationId, (invitations) => [...invitations.filter((i) => i.invitationId !== d.invitationId), entry]);
  },

  // The OrganizationMemberAdded appended with it makes the invitee a member.
  OrganizationMemberInvitationAccepted: (event, store) => invitationAnswered(store, event),
  OrganizationMemberInvitationDeclined: (event, store) => invitationAnswered(store, event),
  OrganizationMemberInvitationWithdrawn: (event, store) => invitationAnswered(store, event),

  // What an admin typed may be the invitee's e-mail: a deleted user leaves none of it in the read side.
  // Applied again, it removes nothing more.
  async UserDeleted(event, store) {
    const { userId } = event.data;
    for (const doc of await organizations(store).find({ invitedUserIds: userId })) {
      await updateInvitations(store, event, doc._id, (invitations) => invitations.filter((i) => i.userId !== userId));
    }
  },

  async OrganizationMemberRemoved(event, store) {
    await updateMembers(store, event, event.data.organizationId, (members) => members.filter((m) => m.userId !== event.data.userId));
  },

  async OrganizationMemberRoleSet(event, store) {
    const d = event.data;
    await updateMembers(store, event, d.organizationId, (members) => members.map((m) => (m.userId === d.userId ? { ...m, role: d.role } : m)));
  },

  async OrganizationMemberDatasetsSet(event, store) {
    const d = event.data;
    await updateMembers(store, event, d.organizationId, (members) => members.map((m) => (m.userId === d.userId ? { ...m, datasets: d.datasets } : m)));
  },

  async OrganizationApiKeyAdded(event, store) {
    const d = event.data;
    await insertOnce(
      keys(store),
      {
        _id: d.keyHash,
        apiKeyId: d.apiKeyId,
        organizationId: d.organizationId,
        name: d.name,
        role: d.role,
        keyHint: d.keyHint,
        created: d.created,
        createdByUserId: d.createdByUserId,
        expires: d.expires,
        revoked: false,
        organizationDeleted: false,
        _position: '',
      },
      event,
    );
  },

  async OrganizationApiKeyRevoked(event, store) {
    const position = positionKey(event.position);
    await keys(store).updateMany({ apiKeyId: event.data.apiKeyId, _position: { $lt: position } }, { $set: { revoked: true, _position: position } });
  },
});

function invitationAnswered(store: ReadStore, event: StoredEvent<string, { organizationId: number; invitationId: number }>): Promise<void> {
  return updateInvitations(store, event, event.data.organizationId, (invitations) => invitations.filter((i) => i.invitationId !== event.data.invitationId));
}
