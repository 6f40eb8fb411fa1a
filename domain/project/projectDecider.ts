import { ConflictError, ValidationError, assertNever } from '../shared/errors';
import type { Decider } from '../shared/decider';
import type { ProjectEvent } from './projectEvents';

export const PROJECT_NAME_MAX = 128;

export type ProjectCommand = {
  type: 'CreateProject';
  data: {
    projectId: number;
    name: string;
    ownerUserId: number;
    isPublic: boolean;
    developmentApiKey: { id: number; key: string; hash: string };
    developmentHmacKey: { id: number; key: string };
    now: Date;
  };
};

export type ProjectState =
  | { status: 'none' }
  | { status: 'active'; projectId: number; ownerUserId: number; collaboratorIds: number[] };

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
        const created = c.now.toISOString();
        return [
          {
            type: 'ProjectCreated',
            data: { projectId: c.projectId, name, description: '', ownerUserId: c.ownerUserId, isPublic: c.isPublic, created },
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
      default:
        return assertNever(command.type);
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'ProjectCreated':
        return { status: 'active', projectId: event.data.projectId, ownerUserId: event.data.ownerUserId, collaboratorIds: [] };
      case 'CollaboratorAdded':
        return state.status === 'active' ? { ...state, collaboratorIds: [...state.collaboratorIds, event.data.userId] } : state;
      case 'ApiKeyAdded':
      case 'HmacKeyAdded':
        return state;
      default:
        return assertNever(event);
    }
  },
};
