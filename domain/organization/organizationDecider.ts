import type { Decider } from '../shared/decider';
import { ConflictError, NotFoundError, ValidationError, assertNever } from '../shared/errors';
import { refuseDeepNesting } from '../shared/markdownNesting';
import { checkText } from '../shared/textRules';
import type { OrganizationApiKeyRole, OrganizationChanges, OrganizationEvent, OrganizationMemberRole } from './organizationEvents';

export const ORGANIZATION_NAME_MAX = 128;
export const ORGANIZATION_README_MAX = 100_000;
export const DATASET_NAME_MAX = 128;
export const DATASETS_MAX = 256;
export const ORGANIZATION_KEY_NAME_MAX = 256;

export type OrganizationCommand =
  | { type: 'CreateOrganization'; data: { organizationId: number; name: string; isDeveloperProfile: boolean; ownerUserId: number; trialId: number | null; now: Date } }
  | { type: 'UpdateOrganization'; data: { changes: OrganizationChanges; now: Date } }
  | { type: 'DeleteOrganization'; data: { now: Date } }
  /** Membership without an invitation: no route sends it (a person joins by accepting); kept for fixtures and tools. */
  | { type: 'AddMember'; data: { userId: number; role: OrganizationMemberRole; datasets: string[]; invited: boolean; addedByUserId: number | null; now: Date } }
  | {
      type: 'InviteMember';
      data: {
        invitationId: number;
        userId: number;
        invitedAs: string;
        role: OrganizationMemberRole;
        datasets: string[];
        invitedByUserId: number;
        acceptedOnActivation: boolean;
        now: Date;
      };
    }
  | { type: 'AcceptMemberInvitation'; data: { invitationId: number; userId: number; now: Date } }
  | { type: 'DeclineMemberInvitation'; data: { invitationId: number; userId: number; now: Date } }
  | { type: 'WithdrawMemberInvitation'; data: { invitationId: number; withdrawnByUserId: number | null; now: Date } }
  | { type: 'RemoveMember'; data: { userId: number; now: Date } }
  | { type: 'SetMemberRole'; data: { userId: number; role: OrganizationMemberRole; now: Date } }
  | { type: 'SetMemberDatasets'; data: { userId: number; datasets: string[]; now: Date } }
  | {
      type: 'AddApiKey';
      data: { apiKeyId: number; name: string; role: OrganizationApiKeyRole; keyHash: string; keyHint: string; createdByUserId: number | null; expires: Date | null; now: Date };
    }
  | { type: 'RevokeApiKey'; data: { apiKeyId: number; now: Date } };

export interface OrganizationMemberState {
  role: OrganizationMemberRole;
  datasets: string[];
}

/** An invitation nobody answered yet. `typed`: what was typed, lower-cased (null once forgotten). */
export interface OrganizationInvitationState {
  userId: number;
  typed: string | null;
  role: OrganizationMemberRole;
  datasets: string[];
  invitedByUserId: number;
}

export const INVITED_AS_MAX = 256;

export type OrganizationState =
  | { status: 'none' }
  | {
      status: 'active';
      organizationId: number;
      ownerUserId: number;
      isDeveloperProfile: boolean;
      members: Readonly<Record<number, OrganizationMemberState>>;
      /** Pending invitations by id: the invitee has no access until they accept. */
      invitations: Readonly<Record<number, OrganizationInvitationState>>;
      /** Key ids that were added and not revoked. */
      liveApiKeyIds: readonly number[];
    }
  | { status: 'deleted'; organizationId: number };

type Active = Extract<OrganizationState, { status: 'active' }>;

function active(state: OrganizationState): Active {
  if (state.status !== 'active') throw new NotFoundError('Organization not found', 'ORGANIZATION_NOT_FOUND');
  return state;
}

function memberOf(state: Active, userId: number): OrganizationMemberState {
  const member = state.members[userId];
  if (!member) throw new ValidationError(`User ${userId} is not a member of this organization`, 'NOT_A_MEMBER');
  return member;
}

/** Refuses unless the invitation is pending and addressed to `userId`: an invitee answers only their own. */
function invitationFor(state: Active, invitationId: number, userId: number): OrganizationInvitationState {
  const invitation = state.invitations[invitationId];
  if (invitation?.userId !== userId) throw new NotFoundError(`No pending invitation ${invitationId} for you in organization ${state.organizationId}`, 'INVITATION_NOT_FOUND');
  return invitation;
}

const typedKey = (invitedAs: unknown): string | null => (typeof invitedAs === 'string' ? invitedAs.trim().toLowerCase() : null);

const adminCount = (state: Active): number => Object.values(state.members).filter((m) => m.role === 'admin').length;

function checkName(value: string): string {
  const name = value.trim();
  if (name === '' || name.length > ORGANIZATION_NAME_MAX) throw new ValidationError(`Organization name must be 1 to ${ORGANIZATION_NAME_MAX} characters`);
  return checkText(name, 'Organization name ("name")', { max: ORGANIZATION_NAME_MAX });
}

/** Dataset names as a guest's limits: trimmed, unique, each 1 to 128 characters. */
function checkDatasets(datasets: readonly string[]): string[] {
  if (datasets.length > DATASETS_MAX) throw new ValidationError(`At most ${DATASETS_MAX} datasets ("datasets")`);
  const names = datasets.map((d, i) => checkText(d.trim(), `Dataset name ("datasets.${i}")`, { max: DATASET_NAME_MAX }));
  return [...new Set(names)];
}

export const organizationDecider: Decider<OrganizationCommand, OrganizationEvent, OrganizationState> = {
  initialState: () => ({ status: 'none' }),
  decide(command, state) {
    const at = command.data.now.toISOString();
    switch (command.type) {
      case 'CreateOrganization': {
        const c = command.data;
        if (state.status !== 'none') throw new ConflictError(`Organization ${c.organizationId} already exists`);
        const name = checkName(c.name);
        return [
          {
            type: 'OrganizationCreated',
            data: { organizationId: c.organizationId, name, isDeveloperProfile: c.isDeveloperProfile, ownerUserId: c.ownerUserId, trialId: c.trialId, created: at },
          },
        ];
      }
      case 'UpdateOrganization': {
        const org = active(state);
        const c = command.data.changes;
        const changes: OrganizationChanges = {};
        if (c.name !== undefined) changes.name = checkName(c.name);
        if (c.readme !== undefined) changes.readme = refuseDeepNesting(checkText(c.readme, 'Readme ("readme")', { max: ORGANIZATION_README_MAX, multiline: true, allowEmpty: true }), 'Readme ("readme")');
        if (c.showHeaderImgMask !== undefined) changes.showHeaderImgMask = c.showHeaderImgMask;
        if (c.experiments !== undefined) changes.experiments = [...new Set(c.experiments.map((e, i) => checkText(e, `Experiment ("experiments.${i}")`, { max: 64 })))];
        if (Object.keys(changes).length === 0) return [];
        return [{ type: 'OrganizationUpdated', data: { organizationId: org.organizationId, changes, updated: at } }];
      }
      case 'DeleteOrganization': {
        const org = active(state);
        // The user's state holds their one developer profile: it lives as long as they do.
        if (org.isDeveloperProfile) throw new ValidationError("A developer profile cannot be deleted: it is the user's own organization", 'DEVELOPER_PROFILE');
        return [{ type: 'OrganizationDeleted', data: { organizationId: org.organizationId, deletedDate: at } }];
      }
      case 'AddMember': {
        const org = active(state);
        const c = command.data;
        if (org.members[c.userId]) throw new ValidationError('This user is already a member of the organization', 'ALREADY_A_MEMBER');
        return [
          {
            type: 'OrganizationMemberAdded',
            data: { organizationId: org.organizationId, userId: c.userId, role: c.role, datasets: checkDatasets(c.datasets), invited: c.invited, addedByUserId: c.addedByUserId, added: at },
          },
        ];
      }
      case 'InviteMember': {
        const org = active(state);
        const c = command.data;
        // A member's profile is already visible to the admins: saying so tells them nothing new.
        if (org.members[c.userId]) throw new ValidationError('This user is already a member of the organization', 'ALREADY_A_MEMBER');
        const invitedAs = checkText(c.invitedAs.trim(), '"usernameOrEmail"', { max: INVITED_AS_MAX });
        // Duplicates are judged on the text typed, never on whom it names: refusing "bob@example.com"
        // because "bob" is invited would tell the admin bob's address.
        const typed = typedKey(invitedAs);
        if (Object.values(org.invitations).some((i) => i.typed === typed)) {
          throw new ConflictError(`"${invitedAs}" is already invited to the organization; the invitation waits for an answer`, 'ALREADY_INVITED');
        }
        if (org.invitations[c.invitationId]) throw new ConflictError(`Invitation ${c.invitationId} already exists`);
        return [
          {
            type: 'OrganizationMemberInvited',
            data: {
              organizationId: org.organizationId,
              invitationId: c.invitationId,
              userId: c.userId,
              invitedAs,
              role: c.role,
              datasets: checkDatasets(c.datasets),
              invitedByUserId: c.invitedByUserId,
              acceptedOnActivation: c.acceptedOnActivation,
              invited: at,
            },
          },
        ];
      }
      case 'AcceptMemberInvitation': {
        const org = active(state);
        const c = command.data;
        const invitation = invitationFor(org, c.invitationId, c.userId);
        return [
          { type: 'OrganizationMemberInvitationAccepted', data: { organizationId: org.organizationId, invitationId: c.invitationId, userId: c.userId, accepted: at } },
          // Membership itself is the event it always was, so every reader of members stays as it is.
          {
            type: 'OrganizationMemberAdded',
            data: { organizationId: org.organizationId, userId: c.userId, role: invitation.role, datasets: invitation.datasets, invited: true, addedByUserId: invitation.invitedByUserId, added: at },
          },
        ];
      }
      case 'DeclineMemberInvitation': {
        const org = active(state);
        const c = command.data;
        invitationFor(org, c.invitationId, c.userId);
        return [{ type: 'OrganizationMemberInvitationDeclined', data: { organizationId: org.organizationId, invitationId: c.invitationId, userId: c.userId, declined: at } }];
      }
      case 'WithdrawMemberInvitation': {
        const org = active(state);
        const c = command.data;
        const invitation = org.invitations[c.invitationId];
        if (!invitation) throw new NotFoundError(`No pending invitation ${c.invitationId} in organization ${org.organizationId}`, 'INVITATION_NOT_FOUND');
        return [
          {
            type: 'OrganizationMemberInvitationWithdrawn',
            data: { organizationId: org.organizationId, invitationId: c.invitationId, userId: invitation.userId, withdrawnByUserId: c.withdrawnByUserId, withdrawn: at },
          },
        ];
      }
      case 'RemoveMember': {
        const org = active(state);
        const member = memberOf(org, command.data.userId);
        if (Object.keys(org.members).length === 1) throw new ValidationError('The only member of an organization cannot be removed: delete the organization instead', 'LAST_MEMBER');
        if (member.role === 'admin' && adminCount(org) === 1) throw new ValidationError('The last admin of an organization cannot leave it: make another member admin first', 'LAST_ADMIN');
        return [{ type: 'OrganizationMemberRemoved', data: { organizationId: org.organizationId, userId: command.data.userId, removed: at } }];
      }
      case 'SetMemberRole': {
        const org = active(state);
        const c = command.data;
        const member = memberOf(org, c.userId);
        if (member.role === c.role) return [];
        if (member.role === 'admin' && adminCount(org) === 1) throw new ValidationError('The last admin of an organization cannot be demoted: make another member admin first', 'LAST_ADMIN');
        return [{ type: 'OrganizationMemberRoleSet', data: { organizationId: org.organizationId, userId: c.userId, role: c.role, updated: at } }];
      }
      case 'SetMemberDatasets': {
        const org = active(state);
        const c = command.data;
        memberOf(org, c.userId);
        return [{ type: 'OrganizationMemberDatasetsSet', data: { organizationId: org.organizationId, userId: c.userId, datasets: checkDatasets(c.datasets), updated: at } }];
      }
      case 'AddApiKey': {
        const org = active(state);
        const c = command.data;
        if (org.liveApiKeyIds.includes(c.apiKeyId)) throw new ConflictError(`API key ${c.apiKeyId} already exists`);
        const name = checkText(c.name.trim(), 'Key name ("name")', { max: ORGANIZATION_KEY_NAME_MAX });
        if (c.expires !== null && c.expires.getTime() <= c.now.getTime()) throw new ValidationError('"ttl" must be at least one second');
        return [
          {
            type: 'OrganizationApiKeyAdded',
            data: {
              organizationId: org.organizationId,
              apiKeyId: c.apiKeyId,
              name,
              role: c.role,
              keyHash: c.keyHash,
              keyHint: c.keyHint,
              createdByUserId: c.createdByUserId,
              expires: c.expires?.toISOString() ?? null,
              created: at,
            },
          },
        ];
      }
      case 'RevokeApiKey': {
        const org = active(state);
        if (!org.liveApiKeyIds.includes(command.data.apiKeyId)) throw new NotFoundError(`API key ${command.data.apiKeyId} not found in this organization`, 'API_KEY_NOT_FOUND');
        return [{ type: 'OrganizationApiKeyRevoked', data: { organizationId: org.organizationId, apiKeyId: command.data.apiKeyId, revoked: at } }];
      }
      default:
        return assertNever(command);
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'OrganizationCreated':
        return {
          status: 'active',
          organizationId: event.data.organizationId,
          ownerUserId: event.data.ownerUserId,
          isDeveloperProfile: event.data.isDeveloperProfile,
          members: { [event.data.ownerUserId]: { role: 'admin', datasets: [] } },
          invitations: {},
          liveApiKeyIds: [],
        };
      case 'OrganizationUpdated':
        return state;
      case 'OrganizationDeleted':
        return { status: 'deleted', organizationId: event.data.organizationId };
      case 'OrganizationMemberAdded': {
        const org = active(state);
        // A member has nothing left to answer: their other invitations (other names typed for them) close.
        const invitations = Object.fromEntries(Object.entries(org.invitations).filter(([, i]) => i.userId !== event.data.userId));
        return { ...org, members: { ...org.members, [event.data.userId]: { role: event.data.role, datasets: event.data.datasets } }, invitations };
      }
      case 'OrganizationMemberInvited': {
        const org = active(state);
        const d = event.data;
        return {
          ...org,
          invitations: { ...org.invitations, [d.invitationId]: { userId: d.userId, typed: typedKey(d.invitedAs), role: d.role, datasets: d.datasets, invitedByUserId: d.invitedByUserId } },
        };
      }
      case 'OrganizationMemberInvitationAccepted':
      case 'OrganizationMemberInvitationDeclined':
      case 'OrganizationMemberInvitationWithdrawn': {
        const org = active(state);
        const { [event.data.invitationId]: _answered, ...invitations } = org.invitations;
        return { ...org, invitations };
      }
      case 'OrganizationMemberRemoved': {
        const org = active(state);
        const members = { ...org.members };
        delete members[event.data.userId];
        return { ...org, members };
      }
      case 'OrganizationMemberRoleSet': {
        const org = active(state);
        return { ...org, members: { ...org.members, [event.data.userId]: { ...memberOf(org, event.data.userId), role: event.data.role } } };
      }
      case 'OrganizationMemberDatasetsSet': {
        const org = active(state);
        return { ...org, members: { ...org.members, [event.data.userId]: { ...memberOf(org, event.data.userId), datasets: event.data.datasets } } };
      }
      case 'OrganizationApiKeyAdded': {
        const org = active(state);
        return { ...org, liveApiKeyIds: [...org.liveApiKeyIds, event.data.apiKeyId] };
      }
      case 'OrganizationApiKeyRevoked': {
        const org = active(state);
        return { ...org, liveApiKeyIds: org.liveApiKeyIds.filter((id) => id !== event.data.apiKeyId) };
      }
      default:
        return assertNever(event);
    }
  },
};
