import { describe, expect, it } from 'vitest';
import { projectDecider, type ProjectCommand } from '../../domain/project/projectDecider';
import type { ProjectEvent } from '../../domain/project/projectEvents';
import { ConflictError, ValidationError } from '../../domain/shared/errors';
import { deciderSpecification } from '../support/deciderSpecification';

const spec = deciderSpecification(projectDecider);
const now = new Date('2026-11-25T10:00:00.000Z');

const create = (name = 'Gestures'): ProjectCommand => ({
  type: 'CreateProject',
  data: {
    projectId: 3,
    name,
    ownerUserId: 7,
    isPublic: false,
    developmentApiKey: { id: 11, key: 'ei_0123456789abcdef', hash: 'hash-of-key' },
    developmentHmacKey: { id: 12, key: 'hmac-secret' },
    now,
  },
});

describe('a project that does not exist yet', () => {
  it('is created with its owner as collaborator and a development API key and HMAC key', () => {
    spec
      .given([])
      .when(create())
      .thenMatches((events) => {
        expect(events.map((e) => e.type)).toEqual(['ProjectCreated', 'CollaboratorAdded', 'ApiKeyAdded', 'HmacKeyAdded']);
        const [created, collaborator, apiKey, hmacKey] = events as [
          Extract<ProjectEvent, { type: 'ProjectCreated' }>,
          Extract<ProjectEvent, { type: 'CollaboratorAdded' }>,
          Extract<ProjectEvent, { type: 'ApiKeyAdded' }>,
          Extract<ProjectEvent, { type: 'HmacKeyAdded' }>,
        ];
        expect(created.data).toMatchObject({ projectId: 3, name: 'Gestures', ownerUserId: 7, created: now.toISOString() });
        expect(collaborator.data).toMatchObject({ userId: 7, isOwner: true });
        expect(apiKey.data).toMatchObject({ apiKeyId: 11, role: 'admin', isDevelopmentKey: true, keyHash: 'hash-of-key', keyHint: 'ei_0123456' });
        expect(hmacKey.data).toMatchObject({ hmacKeyId: 12, hmacKey: 'hmac-secret', isDevelopmentKey: true });
      });
  });

  it('is refused an empty or over-long name', () => {
    spec.given([]).when(create('  ')).thenThrows(ValidationError, /must not be empty/);
    spec.given([]).when(create('x'.repeat(129))).thenThrows(ValidationError, /at most 128/);
  });
});

describe('an existing project', () => {
  it('cannot be created again', () => {
    const history = projectDecider.decide(create(), projectDecider.initialState());
    spec.given(history).when(create()).thenThrows(ConflictError, /already exists/);
  });

  it('knows its owner and collaborators after folding its events', () => {
    const history = projectDecider.decide(create(), projectDecider.initialState());
    const state = history.reduce(projectDecider.evolve, projectDecider.initialState());
    expect(state).toMatchObject({ status: 'active', projectId: 3, ownerUserId: 7, collaboratorIds: [7], apiKeyHashes: ['hash-of-key'] });
  });
});
