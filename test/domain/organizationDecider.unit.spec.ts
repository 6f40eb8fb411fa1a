import { describe, expect, it } from 'vitest';
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

describe("an organization's invitations", () => {
  const invite = (invitationId: number, userId: number, invitedAs: string, extra: Partial<{ role: 'admin' | 'member' | 'guest'; datasets: string[]; acceptedOnActivation: boolean }> = {}): OrganizationCommand => ({
    type: 'InviteMember',
    data: { invitationId, userId, invitedAs, role: extra.role ?? 'member', datasets: extra.datasets ?? [], invitedByUserId: 7, acceptedOnActivation: extra.acceptedOnActivation ?? false, now },
  });
  const invited = (invitationId: number, userId: number, invitedAs: string, role: 'admin' | 'member' | 'guest' = 'member', datasets: string[] = []) => ({
    type: 'OrganizationMemberInvited' as const,
    data: { organizationId: 4, invitationId, userId, invitedAs, role, datasets, invitedByUserId: 7, acceptedOnActivation: false, invited: now.toISOString() },
  });
  const accepted = (invitationId: number, userId: number) => ({ type: 'OrganizationMemberInvitationAccepted' as const, data: { organizationId: 4, invitationId, userId, accepted: now.toISOString() } });
  const joined = (userId: number, role: 'admin' | 'member' | 'guest', datasets: string[] = []) => ({
    type: 'OrganizationMemberAdded' as const,
    data: { organizationId: 4, userId, role, datasets, invited: true, addedByUserId: 7, added: now.toISOString() },
  });
  const accept = (invitationId: number, userId: number): OrganizationCommand => ({ type: 'AcceptMemberInvitation', data: { invitationId, userId, now } });
  const decline = (invitationId: number, userId: number): OrganizationCommand => ({ type: 'DeclineMemberInvitation', data: { invitationId, userId, now } });
  const withdraw = (invitationId: number): OrganizationCommand => ({ type: 'WithdrawMemberInvitation', data: { invitationId, withdrawnByUserId: 7, now } });

  it('records what was typed, trimmed, with the role and datasets offered; nobody becomes a member by it', () => {
    spec.given([created]).when(invite(20, 8, ' bob ', { role: 'guest', datasets: [' wrists ', 'wrists'] })).then([invited(20, 8, 'bob', 'guest', ['wrists'])]);
  });

  it('makes the invitee a member only when they accept, with the role and datasets of the invitation', () => {
    spec.given([created, invited(20, 8, 'bob', 'guest', ['wrists'])]).when(accept(20, 8)).then([accepted(20, 8), joined(8, 'guest', ['wrists'])]);
    // Before accepting, the invitee is no member: member changes refuse them.
    spec.given([created, invited(20, 8, 'bob')]).when({ type: 'SetMemberRole', data: { userId: 8, role: 'admin', now } }).thenThrows(ValidationError, /not a member/);
  });

  it('lets only the invitee answer, and only once', () => {
    spec.given([created, invited(20, 8, 'bob')]).when(accept(20, 9)).thenThrows(NotFoundError, /No pending invitation 20/);
    spec.given([created, invited(20, 8, 'bob'), accepted(20, 8), joined(8, 'member')]).when(accept(20, 8)).thenThrows(NotFoundError, /No pending invitation 20/);
    spec.given([created, invited(20, 8, 'bob')]).when(decline(20, 9)).thenThrows(NotFoundError, /No pending invitation 20/);
  });

  it('is declined by the invitee, and withdrawn by an admin, and then cannot be accepted', () => {
    const declined = { type: 'OrganizationMemberInvitationDeclined' as const, data: { organizationId: 4, invitationId: 20, userId: 8, declined: now.toISOString() } };
    const withdrawn = { type: 'OrganizationMemberInvitationWithdrawn' as const, data: { organizationId: 4, invitationId: 20, userId: 8, withdrawnByUserId: 7, withdrawn: now.toISOString() } };
    spec.given([created, invited(20, 8, 'bob')]).when(decline(20, 8)).then([declined]);
    spec.given([created, invited(20, 8, 'bob')]).when(withdraw(20)).then([withdrawn]);
    spec.given([created, invited(20, 8, 'bob'), declined]).when(accept(20, 8)).thenThrows(NotFoundError);
    spec.given([created, invited(20, 8, 'bob'), withdrawn]).when(accept(20, 8)).thenThrows(NotFoundError);
    spec.given([created, invited(20, 8, 'bob'), withdrawn]).when(withdraw(20)).thenThrows(NotFoundError, /No pending invitation 20/);
  });

  it('refuses the same name typed twice (in any case) while the first waits, whoever it names', () => {
    spec.given([created, invited(20, 8, 'bob')]).when(invite(21, 8, 'BOB')).thenThrows(ConflictError, /already invited/);
    // A name no account has (a user id no account will have) is refused alike.
    spec.given([created, invited(20, 900, 'nobody')]).when(invite(21, 901, 'Nobody')).thenThrows(ConflictError, /already invited/);
    spec.given([created, invited(20, 8, 'bob')]).when(invite(20, 9, 'carol')).thenThrows(ConflictError, /Invitation 20 already exists/);
  });

  it('takes another name for someone already invited, which tells nothing about who they are', () => {
    spec.given([created, invited(20, 8, 'bob')]).when(invite(21, 8, 'bob@example.com')).then([invited(21, 8, 'bob@example.com')]);
  });

  it('closes every other invitation of a person who accepts one', () => {
    const history = [created, invited(20, 8, 'bob'), invited(21, 8, 'bob@example.com'), accepted(20, 8), joined(8, 'member')];
    spec.given(history).when(accept(21, 8)).thenThrows(NotFoundError, /No pending invitation 21/);
    spec.given(history).when(withdraw(21)).thenThrows(NotFoundError);
  });

  it('refuses to invite a member, and a name typed again after its invitation was answered is a new invitation', () => {
    spec.given([created, added(8, 'member')]).when(invite(20, 8, 'bob')).thenThrows(ValidationError, /already a member/);
    const declined = { type: 'OrganizationMemberInvitationDeclined' as const, data: { organizationId: 4, invitationId: 20, userId: 8, declined: now.toISOString() } };
    spec.given([created, invited(20, 8, 'bob'), declined]).when(invite(21, 8, 'bob')).then([invited(21, 8, 'bob')]);
  });

  it('refuses a typed name with a control character, an over-long one and bad datasets', () => {
    spec.given([created]).when(invite(20, 8, 'bo\u0000b')).thenThrows(ValidationError, /usernameOrEmail/);
    spec.given([created]).when(invite(20, 8, 'b'.repeat(257))).thenThrows(ValidationError, /usernameOrEmail/);
    spec.given([created]).when(invite(20, 8, 'bob', { datasets: ['a\u0000b'] })).thenThrows(ValidationError, /datasets\.0/);
  });

  it('keeps an invitation whose typed name was forgotten (sealed, its key destroyed) answerable', () => {
    const forgotten = { ...invited(20, 8, 'bob'), data: { ...invited(20, 8, 'bob').data, invitedAs: null as unknown as string } };
    spec.given([created, forgotten]).when(invite(21, 9, 'bob')).then([invited(21, 9, 'bob')]);
    spec.given([created, forgotten]).when(withdraw(20)).thenMatches((events) => expect(events.map((e) => e.type)).toEqual(['OrganizationMemberInvitationWithdrawn']));
  });

  it('takes no invitation or answer once deleted', () => {
    const deleted = { type: 'OrganizationDeleted' as const, data: { organizationId: 4, deletedDate: now.toISOString() } };
    spec.given([created, invited(20, 8, 'bob'), deleted]).when(accept(20, 8)).thenThrows(NotFoundError, /Organization not found/);
    spec.given([created, deleted]).when(invite(20, 8, 'bob')).thenThrows(NotFoundError, /Organization not found/);
  });
});
