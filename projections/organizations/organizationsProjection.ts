import type { OrganizationEvent } from '../../domain/organization/organizationEvents';
import { defineProjection, insertOnce } from '../projection';
import { ORGANIZATIONS, type OrganizationDocument } from './organizationDocument';

export const organizationsProjection = defineProjection<OrganizationEvent>('organizations', [ORGANIZATIONS], {
  async OrganizationCreated(event, store) {
    const d = event.data;
    await insertOnce(
      store.collection<OrganizationDocument>(ORGANIZATIONS),
      {
        _id: d.organizationId,
        id: d.organizationId,
        name: d.name,
        isDeveloperProfile: d.isDeveloperProfile,
        ownerUserId: d.ownerUserId,
        members: [{ userId: d.ownerUserId, role: 'admin', added: d.created }],
        memberIds: [d.ownerUserId],
        trialId: d.trialId,
        created: d.created,
        _position: '',
      },
      event,
    );
  },
});
