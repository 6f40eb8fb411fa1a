import type { OrganizationEvent } from '../../domain/organization/organizationEvents';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import type { ReadStore } from '../../stores/readstore/readStore';
import { defineProjection, insertOnce, positionKey, updateOnce } from '../projection';
import { ORGANIZATION_API_KEYS, ORGANIZATIONS, type OrganizationApiKeyDocument, type OrganizationDocument, type OrganizationMemberEntry } from './organizationDocument';

const organizations = (store: ReadStore) => store.collection<OrganizationDocument>(ORGANIZATIONS);
const keys = (store: ReadStore) => store.collection<OrganizationApiKeyDocument>(ORGANIZATION_API_KEYS);

/** Rewrites the member list at this event's position (a replayed event finds the document past it). */
async function updateMembers(store: ReadStore, event: StoredEvent, organizationId: number, change: (members: OrganizationMemberEntry[]) => OrganizationMemberEntry[]): Promise<void> {
  const doc = await organizations(store).findOne({ _id: organizationId });
  if (!doc || doc._position >= positionKey(event.position)) return;
  const members = change(doc.members);
  await updateOnce(organizations(store), organizationId, { $set: { members, memberIds: members.map((m) => m.userId) } }, event);
}

export const organizationsProjection = defineProjection<OrganizationEvent>('organizations', [ORGANIZATIONS, ORGANIZATION_API_KEYS], {
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
    await updateMembers(store, event, d.organizationId, (members) => [...members, { userId: d.userId, role: d.role, datasets: d.datasets, added: d.added, invited: d.invited }]);
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
