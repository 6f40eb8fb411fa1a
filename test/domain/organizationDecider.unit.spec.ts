import { describe, it } from 'vitest';
import { organizationDecider, type OrganizationCommand } from '../../domain/organization/organizationDecider';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(organizationDecider);
const now = new Date('2026-11-25T10:00:00.000Z');
const create = (name: string): OrganizationCommand => ({
  type: 'CreateOrganization',
  data: { organizationId: 4, name, isDeveloperProfile: false, ownerUserId: 7, trialId: null, now },
});
const created = { type: 'OrganizationCreated' as const, data: { organizationId: 4, name: 'Analytical Engines', isDeveloperProfile: false, ownerUserId: 7, trialId: null, created: now.toISOString() } };

describe('an organization that does not exist yet', () => {
  it('is created with its trimmed name', () => {
    spec.given([]).when(create(' Analytical Engines ')).then([created]);
  });

  it('is refused an empty or over-long name', () => {
    spec.given([]).when(create('  ')).thenThrows(ValidationError, /1 to 128 characters/);
    spec.given([]).when(create('x'.repeat(129))).thenThrows(ValidationError, /1 to 128 characters/);
  });

  it('is refused a name with a control character or a direction override, naming the field', () => {
    spec.given([]).when(create('Analytical\u0000Engines')).thenThrows(ValidationError, /Organization name \("name"\) contains a control character \(U\+0000\)/);
    spec.given([]).when(create('Analytical\u202EEngines')).thenThrows(ValidationError, /\("name"\) contains an invisible formatting character \(U\+202E\)/);
  });
});

describe('an existing organization', () => {
  it('cannot be created again', () => {
    spec.given([created]).when(create('Again')).thenThrows(ConflictError, /already exists/);
  });
});

const added = (userId: number, role: 'admin' | 'member' | 'guest', datasets: string[] = []) => ({
  type: 'OrganizationMemberAdded' as const,
  data: { organizationId: 4, userId, role, datasets, invited: false, addedByUserId: 7, added: now.toISOString() },
});
const add = (userId: number, role: 'admin' | 'member' | 'guest', datasets: string[] = []): OrganizationCommand => ({
  type: 'AddMember',
  data: { userId, role, datasets, invited: false, addedByUserId: 7, now },
});

describe('an organization with its owner as only admin', () => {
  it('adds a member with a role and the datasets a guest may see, trimmed and without repeats', () => {
    spec.given([created]).when(add(8, 'guest', [' wrists ', 'wrists', 'ankles'])).then([added(8, 'guest', ['wrists', 'ankles'])]);
  });

  it('refuses to add someone twice, the owner included', () => {
    spec.given([created, added(8, 'member')]).when(add(8, 'admin')).thenThrows(ValidationError, /already a member/);
    spec.given([created]).when(add(7, 'member')).thenThrows(ValidationError, /already a member/);
  });

  it('refuses a dataset name with a control character', () => {
    spec.given([created]).when(add(8, 'guest', ['a\u0000b'])).thenThrows(ValidationError, /datasets\.0/);
  });

  it('does not let its last admin leave or be demoted', () => {
    spec.given([created, added(8, 'member')]).when({ type: 'RemoveMember', data: { userId: 7, now } }).thenThrows(ValidationError, /last admin/);
    spec.given([created, added(8, 'member')]).when({ type: 'SetMemberRole', data: { userId: 7, role: 'member', now } }).thenThrows(ValidationError, /last admin of an organization cannot be demoted/);
  });

  it('does not remove its only member', () => {
    spec.given([created]).when({ type: 'RemoveMember', data: { userId: 7, now } }).thenThrows(ValidationError, /only member/);
  });

  it('lets an admin go once another admin exists', () => {
    const second = { type: 'OrganizationMemberRoleSet' as const, data: { organizationId: 4, userId: 8, role: 'admin' as const, updated: now.toISOString() } };
    spec.given([created, added(8, 'member')]).when({ type: 'SetMemberRole', data: { userId: 8, role: 'admin', now } }).then([second]);
    spec.given([created, added(8, 'member'), second]).when({ type: 'RemoveMember', data: { userId: 7, now } }).then([{ type: 'OrganizationMemberRemoved', data: { organizationId: 4, userId: 7, removed: now.toISOString() } }]);
  });

  it('records nothing when a role is set to the one the member has', () => {
    spec.given([created, added(8, 'member')]).when({ type: 'SetMemberRole', data: { userId: 8, role: 'member', now } }).then([]);
  });

  it('refuses member changes for someone who is not a member', () => {
    spec.given([created]).when({ type: 'SetMemberDatasets', data: { userId: 9, datasets: [], now } }).thenThrows(ValidationError, /not a member/);
    spec.given([created]).when({ type: 'RemoveMember', data: { userId: 9, now } }).thenThrows(ValidationError, /not a member/);
  });

  it('keeps only the settings that are given, and refuses a bad name', () => {
    spec.given([created]).when({ type: 'UpdateOrganization', data: { changes: { name: ' Engines ', showHeaderImgMask: true }, now } }).then([
      { type: 'OrganizationUpdated', data: { organizationId: 4, changes: { name: 'Engines', showHeaderImgMask: true }, updated: now.toISOString() } },
    ]);
    spec.given([created]).when({ type: 'UpdateOrganization', data: { changes: {}, now } }).then([]);
    spec.given([created]).when({ type: 'UpdateOrganization', data: { changes: { name: ' ' }, now } }).thenThrows(ValidationError, /1 to 128/);
    spec.given([created]).when({ type: 'UpdateOrganization', data: { changes: { experiments: ['ok', 'b\u202Ead'] }, now } }).thenThrows(ValidationError, /experiments\.1/);
  });
});

describe("an organization's API keys", () => {
  const key = (apiKeyId: number, expires: Date | null = null): OrganizationCommand => ({
    type: 'AddApiKey',
    data: { apiKeyId, name: 'CI', role: 'member', keyHash: 'h', keyHint: 'ei_0123456', createdByUserId: 7, expires, now },
  });
  const keyAdded = { type: 'OrganizationApiKeyAdded' as const, data: { organizationId: 4, apiKeyId: 11, name: 'CI', role: 'member' as const, keyHash: 'h', keyHint: 'ei_0123456', createdByUserId: 7, expires: null, created: now.toISOString() } };

  it('records the hash and hint of a new key, never the key', () => {
    spec.given([created]).when(key(11)).then([keyAdded]);
  });

  it('refuses a time to live that has already passed', () => {
    spec.given([created]).when(key(11, now)).thenThrows(ValidationError, /ttl/);
  });

  it('revokes a live key once, and does not know another', () => {
    const revoked = { type: 'OrganizationApiKeyRevoked' as const, data: { organizationId: 4, apiKeyId: 11, revoked: now.toISOString() } };
    spec.given([created, keyAdded]).when({ type: 'RevokeApiKey', data: { apiKeyId: 11, now } }).then([revoked]);
    spec.given([created, keyAdded, revoked]).when({ type: 'RevokeApiKey', data: { apiKeyId: 11, now } }).thenThrows(NotFoundError, /not found/);
    spec.given([created]).when({ type: 'RevokeApiKey', data: { apiKeyId: 12, now } }).thenThrows(NotFoundError, /not found/);
  });
});

describe('a deleted organization', () => {
  const deleted = { type: 'OrganizationDeleted' as const, data: { organizationId: 4, deletedDate: now.toISOString() } };

  it('is not deleted when it is a developer profile', () => {
    spec.given([{ ...created, data: { ...created.data, isDeveloperProfile: true } }]).when({ type: 'DeleteOrganization', data: { now } }).thenThrows(ValidationError, /developer profile/);
  });

  it('is deleted once', () => {
    spec.given([created]).when({ type: 'DeleteOrganization', data: { now } }).then([deleted]);
    spec.given([created, deleted]).when({ type: 'DeleteOrganization', data: { now } }).thenThrows(NotFoundError, /not found/);
  });

  it('takes no members or settings', () => {
    spec.given([created, deleted]).when(add(8, 'member')).thenThrows(NotFoundError, /not found/);
    spec.given([created, deleted]).when({ type: 'UpdateOrganization', data: { changes: { name: 'x' }, now } }).thenThrows(NotFoundError);
  });
});
