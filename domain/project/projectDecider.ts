import { ConflictError, ForbiddenError, NotFoundError, ValidationError, assertNever } from '../shared/errors';
import { UNUSABLE_API_KEY } from './apiKeys';
import type { Decider } from '../shared/decider';
import { checkDate, checkId } from '../shared/numberRules';
import { checkText } from '../shared/textRules';
import type { ApiKeyRole, ProjectEvent } from './projectEvents';
import { PROJECT_NAME_MAX, checkSettingsChange, type ProjectSettingsChange } from './projectSettings';

export { PROJECT_NAME_MAX };
export const KEY_NAME_MAX = 128;
export const HMAC_KEY_MAX = 256;
/** Longest API key value a client may choose (generated ones are far shorter). */
export const API_KEY_VALUE_MAX = 256;

/** What project creation needs to know of the white label a request came to. */
export interface HostWhitelabel {
  whitelabelId: number;
  allowFreeProjects: boolean;
}

/**
 * The white label a new project belongs to: the one whose domain it was made on, else the one its
 * owner organization belongs to, else none. On a domain whose white label allows no free projects,
 * only a project of an organization of that white label may be made.
 */
export function whitelabelOfNewProject(host: HostWhitelabel | undefined, ownerOrganization: { organizationId: number; whitelabelId: number | null } | undefined): number | null {
  if (host && !host.allowFreeProjects && ownerOrganization?.whitelabelId !== host.whitelabelId) {
    throw new ForbiddenError(
      'This white label does not allow free projects (allowFreeProjects is false): create the project in an organization of the white label',
      'FREE_PROJECTS_NOT_ALLOWED',
    );
  }
  return host?.whitelabelId ?? ownerOrganization?.whitelabelId ?? null;
}

export type ProjectCommand =
  | {
      type: 'CreateProject';
      data: {
        projectId: number;
        name: string;
        ownerUserId: number;
        isPublic: boolean;
        developmentApiKey: { id: number; key: string; hash: string };
        developmentHmacKey: { id: number; key: string };
        /** The white label whose domain the request came to (its free-project switch applies). */
        hostWhitelabel?: HostWhitelabel;
        /** The organization the project is made in, and the white label that organization belongs to. */
        ownerOrganization?: { organizationId: number; whitelabelId: number | null };
        now: Date;
      };
    }
  | { type: 'UpdateProject'; data: { changes: ProjectSettingsChange; now: Date } }
  | {
      type: 'AddApiKey';
      data: {
        apiKeyId: number;
        name: string;
        role: ApiKeyRole;
        key: string;
        hash: string;
        isDevelopmentKey: boolean;
        expires: Date | null;
        createdByUserId: number | null;
        now: Date;
      };
    }
  | { type: 'RevokeApiKey'; data: { apiKeyId: number; now: Date } }
  | { type: 'AddHmacKey'; data: { hmacKeyId: number; name: string; hmacKey: string; isDevelopmentKey: boolean; createdByUserId: number | null; now: Date } }
  | { type: 'RevokeHmacKey'; data: { hmacKeyId: number; now: Date } }
  | { type: 'AddCollaborator'; data: { userId: number; now: Date } }
  | { type: 'RemoveCollaborator'; data: { userId: number; now: Date; /** Who removes; recorded when it withdraws an invitation. */ byUserId?: number | null } }
  | { type: 'InviteCollaborator'; data: { invitationId: number; userId: number | null; invitedAs: string; invitedByUserId: number; now: Date } }
  | { type: 'AcceptCollaboratorInvitation'; data: { invitationId: number; userId: number; now: Date } }
  | { type: 'DeclineCollaboratorInvitation'; data: { invitationId: number; userId: number; now: Date } }
  | { type: 'WithdrawCollaboratorInvitation'; data: { invitationId: number; withdrawnByUserId: number | null; now: Date } }
  | { type: 'DeleteProject'; data: { scheduledFullDeletionDate: Date; now: Date } }
  | { type: 'FullyDeleteProject'; data: { quarantinedBlobs: string[]; now: Date } }
  | { type: 'PurgeProjectBlobs'; data: { purged: string[]; restored: string[]; now: Date } };

interface KeyState {
  isDevelopmentKey: boolean;
  revoked: boolean;
}

interface ProjectFacts {
  projectId: number;
  ownerUserId: number;
  collaboratorIds: number[];
  apiKeys: Record<number, KeyState>;
  /** Hashes of every API key the project ever had: a key value is never used twice. */
  apiKeyHashes: string[];
  hmacKeys: Record<number, KeyState>;
  /** Pending invitations by id: the invitee has no access until they accept. `userId` null: nobody's. */
  invitations: Record<number, { userId: number | null; invitedAs: string }>;
}

export const INVITED_AS_MAX = 256;

/** The user's pending invitations (one per name they were invited by), oldest first. */
function pendingInvitationsOf(project: ProjectFacts, userId: number): number[] {
  return Object.entries(project.invitations)
    .filter(([, i]) => i.userId === userId)
    .map(([id]) => Number(id))
    .sort((a, b) => a - b);
}

const sameName = (a: string, b: string): boolean => a.trim().toLowerCase() === b.trim().toLowerCase();

/** Refuses unless the invitation is pending and addressed to `userId`: an invitee answers only their own. */
function invitationFor(project: ProjectFacts, invitationId: number, userId: number): void {
  if (project.invitations[invitationId]?.userId !== userId) {
    throw new NotFoundError(`No pending invitation ${invitationId} for you in project ${project.projectId}`, 'INVITATION_NOT_FOUND');
  }
}

export type ProjectState =
  | { status: 'none' }
  | ({ status: 'active' } & ProjectFacts)
  | ({ status: 'deleted'; scheduledFullDeletionDate: string } & ProjectFacts)
  | ({ status: 'fullyDeleted'; blobsPurged: boolean } & ProjectFacts);

function keyName(name: string, what: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw new ValidationError(`"name": ${what} needs a name`);
  if (trimmed.length > KEY_NAME_MAX) throw new ValidationError(`"name": at most ${KEY_NAME_MAX} characters`);
  return checkText(trimmed, '"name"', { max: KEY_NAME_MAX });
}

function active(state: ProjectState): { status: 'active' } & ProjectFacts {
  if (state.status === 'none') throw new NotFoundError('Project not found', 'PROJECT_NOT_FOUND');
  if (state.status !== 'active') throw new NotFoundError(`Project ${state.projectId} not found (it was deleted)`, 'PROJECT_NOT_FOUND');
  return state;
}

export const projectDecider: Decider<ProjectCommand, ProjectEvent, ProjectState> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    switch (command.type) {
      case 'CreateProject': {
        const c = command.data;
        if (state.status !== 'none') throw new ConflictError(`Project ${c.projectId} already exists`);
        const name = c.name.trim();
        if (name === '') throw new ValidationError('Project name must not be empty');
        if (name.length > PROJECT_NAME_MAX) throw new ValidationError(`Project name must be at most ${PROJECT_NAME_MAX} characters`);
        checkText(name, 'Project name ("name")', { max: PROJECT_NAME_MAX });
        const created = checkDate(c.now, 'now');
        const whitelabelId = whitelabelOfNewProject(c.hostWhitelabel, c.ownerOrganization);
        return [
          {
            type: 'ProjectCreated',
            data: {
              projectId: c.projectId,
              name,
              description: '',
              ownerUserId: c.ownerUserId,
              isPublic: c.isPublic,
              created,
              ...(whitelabelId !== null ? { whitelabelId } : {}),
              ...(c.ownerOrganization ? { ownerOrganizationId: c.ownerOrganization.organizationId } : {}),
            },
          },
          { type: 'CollaboratorAdded', data: { projectId: c.projectId, userId: c.ownerUserId, isOwner: true, added: created } },
          {
            type: 'ApiKeyAdded',
            data: {
              projectId: c.projectId,
              apiKeyId: c.developmentApiKey.id,
              name: 'Development key',
              role: 'admin',
              keyHash: c.developmentApiKey.hash,
              keyHint: c.developmentApiKey.key.slice(0, 10),
              isDevelopmentKey: true,
              apiKey: c.developmentApiKey.key,
              createdByUserId: c.ownerUserId,
              created,
              expires: null,
            },
          },
          {
            type: 'HmacKeyAdded',
            data: {
              projectId: c.projectId,
              hmacKeyId: c.developmentHmacKey.id,
              name: 'Development key',
              hmacKey: c.developmentHmacKey.key,
              isDevelopmentKey: true,
              createdByUserId: c.ownerUserId,
              created,
            },
          },
        ];
      }
      case 'UpdateProject': {
        const project = active(state);
        const changes = checkSettingsChange(command.data.changes, project.collaboratorIds);
        if (Object.keys(changes).length === 0) return [];
        return [{ type: 'ProjectUpdated', data: { projectId: project.projectId, changes, updated: command.data.now.toISOString() } }];
      }
      case 'AddApiKey': {
        const project = active(state);
        const c = command.data;
        if (project.apiKeys[c.apiKeyId]) throw new ConflictError(`API key ${c.apiKeyId} already exists`);
        // The same neutral refusal as for a value used by another project (see UNUSABLE_API_KEY).
        if (project.apiKeyHashes.includes(c.hash)) throw new ValidationError(UNUSABLE_API_KEY, 'UNUSABLE_API_KEY');
        if (c.expires !== null && c.expires.getTime() <= c.now.getTime()) throw new ValidationError('"ttl": the key would expire at once; give a positive number of seconds');
        if (c.expires !== null) checkDate(c.expires, '"ttl" (the expiry it gives)');
        checkText(c.key, '"apiKey"', { max: API_KEY_VALUE_MAX });
        return [
          {
            type: 'ApiKeyAdded',
            data: {
              projectId: project.projectId,
              apiKeyId: c.apiKeyId,
              name: keyName(c.name, 'an API key'),
              role: c.role,
              keyHash: c.hash,
              keyHint: c.key.slice(0, 10),
              isDevelopmentKey: c.isDevelopmentKey,
              // Only the development key is shown again (to collaborators); others are shown once.
              apiKey: c.isDevelopmentKey ? c.key : null,
              createdByUserId: c.createdByUserId,
              created: c.now.toISOString(),
              expires: c.expires?.toISOString() ?? null,
            },
          },
        ];
      }
      case 'RevokeApiKey': {
        const project = active(state);
        const key = project.apiKeys[command.data.apiKeyId];
        if (!key || key.revoked) throw new NotFoundError(`API key ${command.data.apiKeyId} not found in project ${project.projectId}`, 'API_KEY_NOT_FOUND');
        return [{ type: 'ApiKeyRevoked', data: { projectId: project.projectId, apiKeyId: command.data.apiKeyId, revoked: command.data.now.toISOString() } }];
      }
      case 'AddHmacKey': {
        const project = active(state);
        const c = command.data;
        if (project.hmacKeys[c.hmacKeyId]) throw new ConflictError(`HMAC key ${c.hmacKeyId} already exists`);
        if (c.hmacKey.trim() === '' || c.hmacKey.length > HMAC_KEY_MAX) throw new ValidationError(`"hmacKey": 1 to ${HMAC_KEY_MAX} characters`);
        checkText(c.hmacKey, '"hmacKey"', { max: HMAC_KEY_MAX });
        return [
          {
            type: 'HmacKeyAdded',
            data: {
              projectId: project.projectId,
              hmacKeyId: c.hmacKeyId,
              name: keyName(c.name, 'an HMAC key'),
              hmacKey: c.hmacKey,
              isDevelopmentKey: c.isDevelopmentKey,
              createdByUserId: c.createdByUserId,
              created: c.now.toISOString(),
            },
          },
        ];
      }
      case 'RevokeHmacKey': {
        const project = active(state);
        const key = project.hmacKeys[command.data.hmacKeyId];
        if (!key || key.revoked) throw new NotFoundError(`HMAC key ${command.data.hmacKeyId} not found in project ${project.projectId}`, 'HMAC_KEY_NOT_FOUND');
        return [{ type: 'HmacKeyRevoked', data: { projectId: project.projectId, hmacKeyId: command.data.hmacKeyId, revoked: command.data.now.toISOString() } }];
      }
      case 'AddCollaborator': {
        const project = active(state);
        if (project.collaboratorIds.includes(command.data.userId)) throw new ConflictError('This user is already a collaborator on the project');
        return [{ type: 'CollaboratorAdded', data: { projectId: project.projectId, userId: command.data.userId, isOwner: false, added: command.data.now.toISOString() } }];
      }
      case 'RemoveCollaborator': {
        const project = active(state);
        const { userId } = command.data;
        // Removing someone who was only invited withdraws the invitations (the SDK has no other call for it).
        const pending = pendingInvitationsOf(project, userId);
        if (pending.length > 0 && !project.collaboratorIds.includes(userId)) {
          return pending.map((invitationId) => ({
            type: 'CollaboratorInvitationWithdrawn' as const,
            data: { projectId: project.projectId, invitationId, userId, withdrawnByUserId: command.data.byUserId ?? null, withdrawn: command.data.now.toISOString() },
          }));
        }
        if (!project.collaboratorIds.includes(userId)) throw new NotFoundError('This user is not a collaborator on the project', 'COLLABORATOR_NOT_FOUND');
        if (project.collaboratorIds.length === 1) throw new ValidationError('The last collaborator cannot be removed: a project needs at least one');
        if (userId === project.ownerUserId) throw new ValidationError('The owner cannot be removed from the project');
        return [{ type: 'CollaboratorRemoved', data: { projectId: project.projectId, userId, removed: command.data.now.toISOString() } }];
      }
      case 'InviteCollaborator': {
        const project = active(state);
        const c = command.data;
        if (!project.collaboratorIds.includes(c.invitedByUserId)) throw new ValidationError('Only a collaborator of the project can invite others to it');
        if (c.userId !== null) checkId(c.userId, 'User id');
        if (c.userId !== null && project.collaboratorIds.includes(c.userId)) throw new ConflictError('This user is already a collaborator on the project');
        if (project.invitations[c.invitationId]) throw new ConflictError(`Invitation ${c.invitationId} already exists`);
        const invitedAs = checkText(c.invitedAs.trim(), '"usernameOrEmail"', { max: INVITED_AS_MAX });
        // Judged by the name typed, which the project sees, never by the account behind it: the same
        // person invited by username and by e-mail has two invitations, as a name with no account has one.
        if (Object.values(project.invitations).some((i) => sameName(i.invitedAs, invitedAs))) {
          throw new ConflictError(`An invitation to "${invitedAs}" already waits for an answer`, 'ALREADY_INVITED');
        }
        return [
          {
            type: 'CollaboratorInvited',
            data: { projectId: project.projectId, invitationId: c.invitationId, userId: c.userId, invitedAs, invitedByUserId: c.invitedByUserId, invited: c.now.toISOString() },
          },
        ];
      }
      case 'AcceptCollaboratorInvitation': {
        const project = active(state);
        const c = command.data;
        invitationFor(project, c.invitationId, c.userId);
        const at = c.now.toISOString();
        // Accepting one invitation answers every other one to the same person.
        const others = pendingInvitationsOf(project, c.userId).filter((id) => id !== c.invitationId);
        return [
          ...[c.invitationId, ...others].map((invitationId) => ({ type: 'CollaboratorInvitationAccepted' as const, data: { projectId: project.projectId, invitationId, userId: c.userId, accepted: at } })),
          // Membership itself is the event it always was, so every reader of collaborators stays as it is.
          ...(project.collaboratorIds.includes(c.userId)
            ? []
            : [{ type: 'CollaboratorAdded' as const, data: { projectId: project.projectId, userId: c.userId, isOwner: false, added: at } }]),
        ];
      }
      case 'DeclineCollaboratorInvitation': {
        const project = active(state);
        const c = command.data;
        invitationFor(project, c.invitationId, c.userId);
        return [{ type: 'CollaboratorInvitationDeclined', data: { projectId: project.projectId, invitationId: c.invitationId, userId: c.userId, declined: c.now.toISOString() } }];
      }
      case 'WithdrawCollaboratorInvitation': {
        const project = active(state);
        const c = command.data;
        const invitation = project.invitations[c.invitationId];
        if (!invitation) throw new NotFoundError(`No pending invitation ${c.invitationId} in project ${project.projectId}`, 'INVITATION_NOT_FOUND');
        return [
          {
            type: 'CollaboratorInvitationWithdrawn',
            data: { projectId: project.projectId, invitationId: c.invitationId, userId: invitation.userId, withdrawnByUserId: c.withdrawnByUserId, withdrawn: c.now.toISOString() },
          },
        ];
      }
      case 'DeleteProject': {
        const project = active(state);
        return [
          {
            type: 'ProjectDeleted',
            data: {
              projectId: project.projectId,
              deletedDate: command.data.now.toISOString(),
              scheduledFullDeletionDate: command.data.scheduledFullDeletionDate.toISOString(),
            },
          },
        ];
      }
      case 'FullyDeleteProject': {
        if (state.status === 'fullyDeleted') return [];
        if (state.status !== 'deleted') throw new ConflictError('Only a deleted project can be fully deleted');
        if (Date.parse(state.scheduledFullDeletionDate) > command.data.now.getTime()) {
          throw new ConflictError(`Project ${state.projectId} is scheduled for full deletion at ${state.scheduledFullDeletionDate}, not before`);
        }
        return [
          {
            type: 'ProjectFullyDeleted',
            data: { projectId: state.projectId, fullDeletionDate: command.data.now.toISOString(), quarantinedBlobs: command.data.quarantinedBlobs },
          },
        ];
      }
      case 'PurgeProjectBlobs': {
        if (state.status !== 'fullyDeleted') throw new ConflictError('Only a fully deleted project has blobs to purge');
        // Done once: a saga that repeats it after a restart changes nothing.
        if (state.blobsPurged) return [];
        const c = command.data;
        return [{ type: 'ProjectBlobsPurged', data: { projectId: state.projectId, purged: c.purged, restored: c.restored, purgedDate: c.now.toISOString() } }];
      }
      default:
        return assertNever(command);
    }
  },

  evolve(state, event) {
    if (event.type === 'ProjectCreated') {
      return { status: 'active', projectId: event.data.projectId, ownerUserId: event.data.ownerUserId, collaboratorIds: [], apiKeys: {}, apiKeyHashes: [], hmacKeys: {}, invitations: {} };
    }
    if (state.status === 'none') return state;
    switch (event.type) {
      case 'CollaboratorAdded':
        return { ...state, collaboratorIds: [...state.collaboratorIds, event.data.userId] };
      case 'CollaboratorRemoved':
        return { ...state, collaboratorIds: state.collaboratorIds.filter((id) => id !== event.data.userId) };
      case 'ApiKeyAdded': {
        // The development flag moves to a new development key.
        const apiKeys = event.data.isDevelopmentKey
          ? Object.fromEntries(Object.entries(state.apiKeys).map(([id, k]) => [id, { ...k, isDevelopmentKey: false }]))
          : { ...state.apiKeys };
        apiKeys[event.data.apiKeyId] = { isDevelopmentKey: event.data.isDevelopmentKey, revoked: false };
        return { ...state, apiKeys, apiKeyHashes: [...state.apiKeyHashes, event.data.keyHash] };
      }
      case 'ApiKeyRevoked':
        return { ...state, apiKeys: { ...state.apiKeys, [event.data.apiKeyId]: { isDevelopmentKey: false, revoked: true } } };
      case 'HmacKeyAdded': {
        const hmacKeys = event.data.isDevelopmentKey
          ? Object.fromEntries(Object.entries(state.hmacKeys).map(([id, k]) => [id, { ...k, isDevelopmentKey: false }]))
          : { ...state.hmacKeys };
        hmacKeys[event.data.hmacKeyId] = { isDevelopmentKey: event.data.isDevelopmentKey, revoked: false };
        return { ...state, hmacKeys };
      }
      case 'HmacKeyRevoked':
        return { ...state, hmacKeys: { ...state.hmacKeys, [event.data.hmacKeyId]: { isDevelopmentKey: false, revoked: true } } };
      case 'ProjectUpdated':
        return state;
      case 'ProjectDeleted':
        return { ...state, status: 'deleted', scheduledFullDeletionDate: event.data.scheduledFullDeletionDate };
      case 'ProjectFullyDeleted': {
        const { scheduledFullDeletionDate: _done, ...facts } = state as ProjectFacts & { scheduledFullDeletionDate?: string };
        return { ...facts, status: 'fullyDeleted', blobsPurged: false };
      }
      case 'ProjectBlobsPurged':
        return state.status === 'fullyDeleted' ? { ...state, blobsPurged: true } : state;
      case 'CollaboratorInvited':
        return { ...state, invitations: { ...state.invitations, [event.data.invitationId]: { userId: event.data.userId, invitedAs: event.data.invitedAs ?? '' } } };
      case 'CollaboratorInvitationAccepted':
      case 'CollaboratorInvitationDeclined':
      case 'CollaboratorInvitationWithdrawn': {
        const { [event.data.invitationId]: _answered, ...invitations } = state.invitations;
        return { ...state, invitations };
      }
      default:
        return assertNever(event);
    }
  },
};
