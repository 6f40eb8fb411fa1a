import { describe, expect, it } from 'vitest';
import { projectDecider, type ProjectCommand } from '../../domain/project/projectDecider';
import type { ProjectEvent } from '../../domain/project/projectEvents';
import type { ProjectSettingsChange } from '../../domain/project/projectSettings';
import { fold } from '../../domain/shared/decider';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/shared/errors';
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

const later = (ms: number) => new Date(now.getTime() + ms);
const day = 24 * 3600 * 1000;

/** The events of a sequence of commands, each decided on the state the previous ones left. */
function history(...commands: ProjectCommand[]): ProjectEvent[] {
  let state = projectDecider.initialState();
  const events: ProjectEvent[] = [];
  for (const c of commands) {
    for (const e of projectDecider.decide(c, state)) {
      events.push(e);
      state = projectDecider.evolve(state, e);
    }
  }
  return events;
}

const update = (changes: ProjectSettingsChange): ProjectCommand => ({ type: 'UpdateProject', data: { changes, now } });

type AddApiKeyData = Extract<ProjectCommand, { type: 'AddApiKey' }>['data'];
const addApiKey = (overrides: Partial<AddApiKeyData> = {}): ProjectCommand => ({
  type: 'AddApiKey',
  data: {
    apiKeyId: 21,
    name: ' CI key ',
    role: 'readonly',
    key: 'ei_fedcba9876543210',
    hash: 'hash-of-ci-key',
    isDevelopmentKey: false,
    expires: null,
    createdByUserId: 7,
    now,
    ...overrides,
  },
});
const revokeApiKey = (apiKeyId: number): ProjectCommand => ({ type: 'RevokeApiKey', data: { apiKeyId, now } });

type AddHmacKeyData = Extract<ProjectCommand, { type: 'AddHmacKey' }>['data'];
const addHmacKey = (overrides: Partial<AddHmacKeyData> = {}): ProjectCommand => ({
  type: 'AddHmacKey',
  data: { hmacKeyId: 22, name: ' Device signing ', hmacKey: 'another-secret', isDevelopmentKey: false, createdByUserId: 7, now, ...overrides },
});
const revokeHmacKey = (hmacKeyId: number): ProjectCommand => ({ type: 'RevokeHmacKey', data: { hmacKeyId, now } });

const addCollaborator = (userId: number): ProjectCommand => ({ type: 'AddCollaborator', data: { userId, now } });
const removeCollaborator = (userId: number): ProjectCommand => ({ type: 'RemoveCollaborator', data: { userId, now } });

const scheduled = later(30 * day);
const deleteProject: ProjectCommand = { type: 'DeleteProject', data: { scheduledFullDeletionDate: scheduled, now } };
const fullyDeleteProject = (at: Date, quarantinedBlobs: string[] = ['a'.repeat(64)]): ProjectCommand => ({ type: 'FullyDeleteProject', data: { quarantinedBlobs, now: at } });
const purge = (at: Date, purged: string[] = ['a'.repeat(64)], restored: string[] = []): ProjectCommand => ({ type: 'PurgeProjectBlobs', data: { purged, restored, now: at } });

const created = history(create());
const withCollaborator = history(create(), addCollaborator(8));
const deleted = history(create(), deleteProject);
const fullyDeleted = history(create(), deleteProject, fullyDeleteProject(scheduled));

/** Every command but CreateProject and FullyDeleteProject, valid on a live project with collaborator 8 and keys 11/12. */
const everyOtherCommand: [string, ProjectCommand][] = [
  ['UpdateProject', update({ description: 'x' })],
  ['AddApiKey', addApiKey()],
  ['RevokeApiKey', revokeApiKey(11)],
  ['AddHmacKey', addHmacKey()],
  ['RevokeHmacKey', revokeHmacKey(12)],
  ['AddCollaborator', addCollaborator(9)],
  ['RemoveCollaborator', removeCollaborator(8)],
  ['DeleteProject', deleteProject],
];

const updated = (changes: ProjectSettingsChange): ProjectEvent[] => [
  { type: 'ProjectUpdated', data: { projectId: 3, changes, updated: now.toISOString() } },
];

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

  it.each(everyOtherCommand)('refuses %s as not found', (_name, command) => {
    spec.given([]).when(command).thenThrows(NotFoundError, /Project not found/);
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

  describe('when its settings are updated', () => {
    it('records the changes as given', () => {
      const changes: ProjectSettingsChange = {
        description: 'Wrist gestures',
        isPublic: true,
        labelingMethod: 'object_detection',
        readme: null,
        dspPageSize: 50,
        performance: { useGpu: true, trainJobRamMb: 4096 },
        targetConstraints: { targetDevices: [{ board: 'nano33' }], applicationBudgets: [{ latencyPerInferenceMs: { maximum: 100 } }] },
      };
      spec.given(created).when(update(changes)).then(updated(changes));
    });

    it('trims the name', () => {
      spec.given(created).when(update({ name: '  Wrist gestures  ' })).then(updated({ name: 'Wrist gestures' }));
      spec.given(created).when(update({ name: 'x'.repeat(128) })).then(updated({ name: 'x'.repeat(128) }));
    });

    it('refuses an empty or over-long name', () => {
      spec.given(created).when(update({ name: '   ' })).thenThrows(ValidationError, /"name": a project name must not be empty/);
      spec.given(created).when(update({ name: 'x'.repeat(129) })).thenThrows(ValidationError, /"name": a project name is at most 128/);
    });

    it('refuses an over-long readme', () => {
      spec.given(created).when(update({ readme: 'x'.repeat(100_001) })).thenThrows(ValidationError, /"readme": at most 100000/);
      spec.given(created).when(update({ readme: 'x'.repeat(100_000) })).then(updated({ readme: 'x'.repeat(100_000) }));
    });

    it.each(['trainJobNotificationUids', 'dspJobNotificationUids', 'modelTestingJobNotificationUids', 'exportJobNotificationUids'] as const)(
      'lets %s name only collaborators, each once',
      (list) => {
        spec.given(withCollaborator).when(update({ [list]: [8, 7, 8, 7] })).then(updated({ [list]: [8, 7] }));
        spec.given(withCollaborator).when(update({ [list]: [] })).then(updated({ [list]: [] }));
        spec.given(withCollaborator).when(update({ [list]: [7, 99] })).thenThrows(ValidationError, new RegExp(`"${list}": user 99 is not a collaborator`));
      },
    );

    it('refuses to notify a collaborator who was removed', () => {
      const removed = history(create(), addCollaborator(8), removeCollaborator(8));
      spec.given(removed).when(update({ trainJobNotificationUids: [8] })).thenThrows(ValidationError, /user 8 is not a collaborator/);
    });

    it('accepts dataset split ratios that add up to 1', () => {
      const twoWay = { trainingSplitRatio: 0.8, testingSplitRatio: 0.2 };
      spec.given(created).when(update({ datasetSplitOptions: twoWay })).then(updated({ datasetSplitOptions: twoWay }));
      // 0.7 + 0.2 + 0.1 is 0.9999999999999999 in floating point.
      const threeWay = { trainingSplitRatio: 0.7, testingSplitRatio: 0.2, validationSplitRatio: 0.1, stratifyBy: { label: true } };
      spec.given(created).when(update({ datasetSplitOptions: threeWay })).then(updated({ datasetSplitOptions: threeWay }));
      const allTraining = { trainingSplitRatio: 1, testingSplitRatio: 0, validationSplitRatio: 0 };
      spec.given(created).when(update({ datasetSplitOptions: allTraining })).then(updated({ datasetSplitOptions: allTraining }));
    });

    it('refuses dataset split ratios that do not add up to 1', () => {
      spec
        .given(created)
        .when(update({ datasetSplitOptions: { trainingSplitRatio: 0.8, testingSplitRatio: 0.1 } }))
        .thenThrows(ValidationError, /must add up to 1/);
      spec
        .given(created)
        .when(update({ datasetSplitOptions: { trainingSplitRatio: 0.8, testingSplitRatio: 0.2, validationSplitRatio: 0.1 } }))
        .thenThrows(ValidationError, /must add up to 1/);
    });

    it('refuses a dataset split ratio outside [0, 1], even when they add up to 1', () => {
      spec
        .given(created)
        .when(update({ datasetSplitOptions: { trainingSplitRatio: 1.2, testingSplitRatio: -0.2 } }))
        .thenThrows(ValidationError, /"datasetSplitOptions.trainingSplitRatio" must be between 0 and 1/);
      spec
        .given(created)
        .when(update({ datasetSplitOptions: { trainingSplitRatio: 0.6, testingSplitRatio: 0.5, validationSplitRatio: -0.1 } }))
        .thenThrows(ValidationError, /"datasetSplitOptions.validationSplitRatio" must be between 0 and 1/);
      spec
        .given(created)
        .when(update({ datasetSplitOptions: { trainingSplitRatio: 1, testingSplitRatio: Number.NaN } }))
        .thenThrows(ValidationError, /"datasetSplitOptions.testingSplitRatio" must be between 0 and 1/);
    });

    it('accepts anomaly label lists that are non-empty and disjoint', () => {
      const anomalyLabelsConfig = { anomalyLabels: ['crack', 'dent'], noAnomalyLabels: ['ok'] };
      spec.given(created).when(update({ anomalyLabelsConfig })).then(updated({ anomalyLabelsConfig }));
    });

    it('refuses an empty anomaly label list', () => {
      spec
        .given(created)
        .when(update({ anomalyLabelsConfig: { anomalyLabels: [], noAnomalyLabels: ['ok'] } }))
        .thenThrows(ValidationError, /both label lists need at least one label/);
      spec
        .given(created)
        .when(update({ anomalyLabelsConfig: { anomalyLabels: ['crack'], noAnomalyLabels: [] } }))
        .thenThrows(ValidationError, /both label lists need at least one label/);
    });

    it('refuses a label that is both an anomaly and not one', () => {
      spec
        .given(created)
        .when(update({ anomalyLabelsConfig: { anomalyLabels: ['crack', 'ok'], noAnomalyLabels: ['ok'] } }))
        .thenThrows(ValidationError, /label "ok" cannot be both an anomaly and not one/);
    });

    it('trims and de-duplicates tags', () => {
      spec.given(created).when(update({ tags: [' audio ', 'audio', 'kws ', 'kws'] })).then(updated({ tags: ['audio', 'kws'] }));
      spec.given(created).when(update({ tags: [] })).then(updated({ tags: [] }));
    });

    it('limits tags to 50, counted after de-duplication', () => {
      const fifty = Array.from({ length: 50 }, (_, i) => `tag-${i}`);
      spec.given(created).when(update({ tags: [...fifty, ' tag-0 '] })).then(updated({ tags: fifty }));
      spec.given(created).when(update({ tags: [...fifty, 'tag-50'] })).thenThrows(ValidationError, /"tags": at most 50 tags/);
    });

    it('refuses an empty or over-long tag', () => {
      spec.given(created).when(update({ tags: ['audio', '   '] })).thenThrows(ValidationError, /"tags": each tag is 1 to 64 characters/);
      spec.given(created).when(update({ tags: ['x'.repeat(65)] })).thenThrows(ValidationError, /"tags": each tag is 1 to 64 characters/);
      spec.given(created).when(update({ tags: ['x'.repeat(64)] })).then(updated({ tags: ['x'.repeat(64)] }));
    });

    it('decides nothing for an empty change', () => {
      spec.given(created).when(update({})).then([]);
    });
  });

  describe('when an API key is added', () => {
    it('records it with a hint and a trimmed name, without its value', () => {
      spec
        .given(created)
        .when(addApiKey({ expires: later(day) }))
        .then([
          {
            type: 'ApiKeyAdded',
            data: {
              projectId: 3,
              apiKeyId: 21,
              name: 'CI key',
              role: 'readonly',
              keyHash: 'hash-of-ci-key',
              keyHint: 'ei_fedcba9',
              isDevelopmentKey: false,
              apiKey: null,
              createdByUserId: 7,
              created: now.toISOString(),
              expires: later(day).toISOString(),
            },
          },
        ]);
    });

    it('keeps the value of a development key only', () => {
      spec
        .given(created)
        .when(addApiKey({ isDevelopmentKey: true, role: 'admin' }))
        .thenMatches((events) => {
          expect(events).toHaveLength(1);
          expect(events[0]!.data).toMatchObject({ isDevelopmentKey: true, apiKey: 'ei_fedcba9876543210', expires: null });
        });
    });

    it('refuses a key whose hash the project already had, even a revoked one, with the neutral message', () => {
      spec.given(created).when(addApiKey({ hash: 'hash-of-key' })).thenThrows(ValidationError, /cannot be used as an API key/);
      const revoked = history(create(), addApiKey(), revokeApiKey(21));
      spec.given(revoked).when(addApiKey({ apiKeyId: 23 })).thenThrows(ValidationError, /cannot be used as an API key/);
    });

    it('refuses an id it already has', () => {
      spec.given(created).when(addApiKey({ apiKeyId: 11 })).thenThrows(ConflictError, /API key 11 already exists/);
    });

    it('refuses an expiry that is not in the future', () => {
      spec.given(created).when(addApiKey({ expires: now })).thenThrows(ValidationError, /would expire at once/);
      spec.given(created).when(addApiKey({ expires: later(-day) })).thenThrows(ValidationError, /would expire at once/);
      spec.given(created).when(addApiKey({ expires: later(1) })).thenMatches((events) => expect(events.map((e) => e.type)).toEqual(['ApiKeyAdded']));
    });

    it('refuses an empty or over-long name', () => {
      spec.given(created).when(addApiKey({ name: '  ' })).thenThrows(ValidationError, /"name": an API key needs a name/);
      spec.given(created).when(addApiKey({ name: 'x'.repeat(129) })).thenThrows(ValidationError, /"name": at most 128/);
    });
  });

  describe('when an API key is revoked', () => {
    it('records the revocation', () => {
      spec
        .given(created)
        .when(revokeApiKey(11))
        .then([{ type: 'ApiKeyRevoked', data: { projectId: 3, apiKeyId: 11, revoked: now.toISOString() } }]);
    });

    it('refuses an unknown key as not found, an HMAC key id included', () => {
      spec.given(created).when(revokeApiKey(99)).thenThrows(NotFoundError, /API key 99 not found in project 3/);
      spec.given(created).when(revokeApiKey(12)).thenThrows(NotFoundError, /API key 12 not found/);
    });

    it('refuses a key that was already revoked as not found', () => {
      spec.given(history(create(), revokeApiKey(11))).when(revokeApiKey(11)).thenThrows(NotFoundError, /API key 11 not found/);
    });
  });

  describe('when an HMAC key is added', () => {
    it('records it with a trimmed name and its value', () => {
      spec
        .given(created)
        .when(addHmacKey())
        .then([
          {
            type: 'HmacKeyAdded',
            data: {
              projectId: 3,
              hmacKeyId: 22,
              name: 'Device signing',
              hmacKey: 'another-secret',
              isDevelopmentKey: false,
              createdByUserId: 7,
              created: now.toISOString(),
            },
          },
        ]);
    });

    it('refuses an empty or over-long key', () => {
      spec.given(created).when(addHmacKey({ hmacKey: '   ' })).thenThrows(ValidationError, /"hmacKey": 1 to 256 characters/);
      spec.given(created).when(addHmacKey({ hmacKey: 'k'.repeat(257) })).thenThrows(ValidationError, /"hmacKey": 1 to 256 characters/);
      spec.given(created).when(addHmacKey({ hmacKey: 'k'.repeat(256) })).thenMatches((events) => expect(events).toHaveLength(1));
    });

    it('refuses an empty or over-long name', () => {
      spec.given(created).when(addHmacKey({ name: '' })).thenThrows(ValidationError, /"name": an HMAC key needs a name/);
      spec.given(created).when(addHmacKey({ name: 'x'.repeat(129) })).thenThrows(ValidationError, /"name": at most 128/);
    });

    it('refuses an id it already has', () => {
      spec.given(created).when(addHmacKey({ hmacKeyId: 12 })).thenThrows(ConflictError, /HMAC key 12 already exists/);
    });
  });

  describe('when an HMAC key is revoked', () => {
    it('records the revocation', () => {
      spec
        .given(created)
        .when(revokeHmacKey(12))
        .then([{ type: 'HmacKeyRevoked', data: { projectId: 3, hmacKeyId: 12, revoked: now.toISOString() } }]);
    });

    it('refuses an unknown or already revoked key as not found', () => {
      spec.given(created).when(revokeHmacKey(99)).thenThrows(NotFoundError, /HMAC key 99 not found in project 3/);
      spec.given(created).when(revokeHmacKey(11)).thenThrows(NotFoundError, /HMAC key 11 not found/);
      spec.given(history(create(), revokeHmacKey(12))).when(revokeHmacKey(12)).thenThrows(NotFoundError, /HMAC key 12 not found/);
    });
  });

  describe('when collaborators change', () => {
    it('adds a collaborator who is not the owner', () => {
      spec
        .given(created)
        .when(addCollaborator(8))
        .then([{ type: 'CollaboratorAdded', data: { projectId: 3, userId: 8, isOwner: false, added: now.toISOString() } }]);
    });

    it('refuses to add someone who is already a collaborator, the owner included', () => {
      spec.given(withCollaborator).when(addCollaborator(8)).thenThrows(ConflictError, /already a collaborator/);
      spec.given(created).when(addCollaborator(7)).thenThrows(ConflictError, /already a collaborator/);
    });

    it('adds again a collaborator who was removed', () => {
      spec
        .given(history(create(), addCollaborator(8), removeCollaborator(8)))
        .when(addCollaborator(8))
        .thenMatches((events) => expect(events.map((e) => e.type)).toEqual(['CollaboratorAdded']));
    });

    it('removes a collaborator', () => {
      spec
        .given(withCollaborator)
        .when(removeCollaborator(8))
        .then([{ type: 'CollaboratorRemoved', data: { projectId: 3, userId: 8, removed: now.toISOString() } }]);
    });

    it('refuses to remove someone who is not a collaborator as not found', () => {
      spec.given(withCollaborator).when(removeCollaborator(99)).thenThrows(NotFoundError, /not a collaborator/);
      spec.given(history(create(), addCollaborator(8), removeCollaborator(8))).when(removeCollaborator(8)).thenThrows(NotFoundError, /not a collaborator/);
    });

    it('refuses to remove the owner', () => {
      spec.given(withCollaborator).when(removeCollaborator(7)).thenThrows(ValidationError, /owner cannot be removed/);
    });

    it('refuses to remove the last collaborator', () => {
      spec.given(created).when(removeCollaborator(7)).thenThrows(ValidationError, /last collaborator cannot be removed/);
    });
  });

  it('is deleted with the date of its full deletion', () => {
    spec
      .given(created)
      .when(deleteProject)
      .then([{ type: 'ProjectDeleted', data: { projectId: 3, deletedDate: now.toISOString(), scheduledFullDeletionDate: scheduled.toISOString() } }]);
  });

  it('cannot be fully deleted while it is live', () => {
    spec.given(created).when(fullyDeleteProject(later(365 * day))).thenThrows(ConflictError, /Only a deleted project can be fully deleted/);
  });
});

describe('a deleted project', () => {
  it.each(everyOtherCommand)('refuses %s as not found', (_name, command) => {
    spec.given(deleted).when(command).thenThrows(NotFoundError, /Project 3 not found \(it was deleted\)/);
  });

  it('cannot be created again', () => {
    spec.given(deleted).when(create()).thenThrows(ConflictError, /already exists/);
  });

  it('is not fully deleted before its scheduled date', () => {
    spec.given(deleted).when(fullyDeleteProject(later(30 * day - 1))).thenThrows(ConflictError, /scheduled for full deletion at .*, not before/);
  });

  it('is fully deleted on or after its scheduled date', () => {
    spec
      .given(deleted)
      .when(fullyDeleteProject(scheduled))
      .then([{ type: 'ProjectFullyDeleted', data: { projectId: 3, fullDeletionDate: scheduled.toISOString(), quarantinedBlobs: ['a'.repeat(64)] } }]);
    spec
      .given(deleted)
      .when(fullyDeleteProject(later(31 * day)))
      .then([{ type: 'ProjectFullyDeleted', data: { projectId: 3, fullDeletionDate: later(31 * day).toISOString(), quarantinedBlobs: ['a'.repeat(64)] } }]);
  });
});

describe('a fully deleted project', () => {
  it('decides nothing when fully deleted again, so a saga that repeats it is harmless', () => {
    spec.given(fullyDeleted).when(fullyDeleteProject(later(60 * day))).then([]);
  });

  it('records which set-aside blobs were purged and which restored, once', () => {
    const b = 'b'.repeat(64);
    spec
      .given(fullyDeleted)
      .when(purge(later(31 * day), ['a'.repeat(64)], [b]))
      .then([{ type: 'ProjectBlobsPurged', data: { projectId: 3, purged: ['a'.repeat(64)], restored: [b], purgedDate: later(31 * day).toISOString() } }]);
    spec.given([...fullyDeleted, ...projectDecider.decide(purge(later(31 * day)), fold(projectDecider, fullyDeleted))]).when(purge(later(32 * day))).then([]);
  });

  it('has no blobs to purge before it is fully deleted', () => {
    spec.given(deleted).when(purge(later(31 * day))).thenThrows(ConflictError, /Only a fully deleted project/);
    spec.given(created).when(purge(later(31 * day))).thenThrows(ConflictError, /Only a fully deleted project/);
  });

  it.each(everyOtherCommand)('refuses %s as not found', (_name, command) => {
    spec.given(fullyDeleted).when(command).thenThrows(NotFoundError, /Project 3 not found \(it was deleted\)/);
  });

  it('keeps its facts but no longer a scheduled date', () => {
    const state = fold(projectDecider, fullyDeleted);
    expect(state.status).toBe('fullyDeleted');
    expect(state).toMatchObject({ projectId: 3, ownerUserId: 7, collaboratorIds: [7] });
    expect(state).not.toHaveProperty('scheduledFullDeletionDate');
  });
});

describe('the state of a project, folded from its events', () => {
  it('moves the development flag to a newly added development API key', () => {
    const state = fold(projectDecider, history(create(), addApiKey({ apiKeyId: 21, isDevelopmentKey: true })));
    expect(state).toMatchObject({
      apiKeys: { 11: { isDevelopmentKey: false, revoked: false }, 21: { isDevelopmentKey: true, revoked: false } },
      apiKeyHashes: ['hash-of-key', 'hash-of-ci-key'],
    });
  });

  it('leaves the development flag where it is when a key that is not one is added', () => {
    const state = fold(projectDecider, history(create(), addApiKey({ isDevelopmentKey: false }), addHmacKey({ isDevelopmentKey: false })));
    expect(state).toMatchObject({
      apiKeys: { 11: { isDevelopmentKey: true, revoked: false }, 21: { isDevelopmentKey: false, revoked: false } },
      hmacKeys: { 12: { isDevelopmentKey: true, revoked: false }, 22: { isDevelopmentKey: false, revoked: false } },
    });
  });

  it('moves the development flag to a newly added development HMAC key', () => {
    const state = fold(projectDecider, history(create(), addHmacKey({ hmacKeyId: 22, isDevelopmentKey: true })));
    expect(state).toMatchObject({ hmacKeys: { 12: { isDevelopmentKey: false, revoked: false }, 22: { isDevelopmentKey: true, revoked: false } } });
  });

  it('marks a revoked key as revoked and no longer the development key', () => {
    const state = fold(projectDecider, history(create(), revokeApiKey(11), revokeHmacKey(12)));
    expect(state).toMatchObject({ apiKeys: { 11: { isDevelopmentKey: false, revoked: true } }, hmacKeys: { 12: { isDevelopmentKey: false, revoked: true } } });
  });

  it('tracks collaborators as they come and go', () => {
    const state = fold(projectDecider, history(create(), addCollaborator(8), addCollaborator(9), removeCollaborator(8)));
    expect(state).toMatchObject({ collaboratorIds: [7, 9] });
  });

  it('records the scheduled date of a deleted project', () => {
    expect(fold(projectDecider, deleted)).toMatchObject({ status: 'deleted', scheduledFullDeletionDate: scheduled.toISOString() });
  });
});

describe('a change of settings with nothing in it', () => {
  it('decides nothing when every field it names is undefined', () => {
    spec.given(created).when(update({ name: undefined, tags: undefined })).then([]);
  });

  it('trims anomaly labels and drops blank ones before comparing the two lists', () => {
    spec.given(created).when(update({ anomalyLabelsConfig: { anomalyLabels: ['ok '], noAnomalyLabels: ['ok'] } })).thenThrows(ValidationError, /both an anomaly and not/);
    spec.given(created).when(update({ anomalyLabelsConfig: { anomalyLabels: [' '], noAnomalyLabels: ['fine'] } })).thenThrows(ValidationError, /at least one label/);
    spec
      .given(created)
      .when(update({ anomalyLabelsConfig: { anomalyLabels: [' broken ', 'broken'], noAnomalyLabels: ['fine'] } }))
      .thenMatches((events) => expect(events[0]?.data).toMatchObject({ changes: { anomalyLabelsConfig: { anomalyLabels: ['broken'], noAnomalyLabels: ['fine'] } } }));
  });
});

describe('texts and numbers a project keeps (no value the deciders accept can break a projection)', () => {
  it('refuses a project name with a control character or a direction override', () => {
    spec.given([]).when(create('Gest\u0000ures')).thenThrows(ValidationError, /Project name \("name"\) contains a control character \(U\+0000\)/);
    spec.given([]).when(create('Gest\u202Eures')).thenThrows(ValidationError, /"name"\) contains an invisible formatting character \(U\+202E\)/);
  });

  it('refuses settings texts with hidden characters, naming the field', () => {
    spec.given(created).when(update({ name: 'Gest\u2066ures' })).thenThrows(ValidationError, /^"name" contains an invisible formatting character/);
    spec.given(created).when(update({ description: 'fine\u0007' })).thenThrows(ValidationError, /^"description" contains a control character \(U\+0007\)/);
    spec.given(created).when(update({ readme: '# Title\u202E' })).thenThrows(ValidationError, /^"readme" contains an invisible formatting character/);
    spec.given(created).when(update({ tags: ['au\u0000dio'] })).thenThrows(ValidationError, /^"tags"\[0\] contains a control character/);
    spec.given(created).when(update({ latencyDevice: 'cortex-m4\n' })).thenThrows(ValidationError, /^"latencyDevice" contains a control character \(U\+000A\)/);
    spec.given(created).when(update({ experiments: ['a\u2028b'] })).thenThrows(ValidationError, /^"experiments"\[0\] contains an invisible/);
    spec
      .given(created)
      .when(update({ anomalyLabelsConfig: { anomalyLabels: ['bro\u0085ken'], noAnomalyLabels: ['fine'] } }))
      .thenThrows(ValidationError, /^"anomalyLabelsConfig"\.anomalyLabels\[0\] contains a control character \(U\+0085\)/);
    spec
      .given(created)
      .when(update({ targetConstraints: { targetDevices: [{ name: 'board\u202E' }], applicationBudgets: [] } }))
      .thenThrows(ValidationError, /"targetConstraints"\.targetDevices\[0\]\.name contains an invisible/);
  });

  it('keeps line breaks and tabs in the readme and the description, and the empty description', () => {
    spec.given(created).when(update({ readme: '# Title\n\n\tcode\r\n', description: 'line one\nline two' })).then(updated({ readme: '# Title\n\n\tcode\r\n', description: 'line one\nline two' }));
    spec.given(created).when(update({ description: '' })).then(updated({ description: '' }));
    spec.given(created).when(update({ description: 'x'.repeat(10_001) })).thenThrows(ValidationError, /^"description" is 10001 characters long/);
  });

  it('refuses metadata that a read model cannot store as a sub-document', () => {
    spec.given(created).when(update({ metadata: { $where: 'x' } })).thenThrows(ValidationError, /"metadata": the key "\$where" must not start with "\$" or contain "\."/);
    spec.given(created).when(update({ metadata: { 'a.b': 1 } })).thenThrows(ValidationError, /the key "a\.b" must not/);
    spec.given(created).when(update({ metadata: { size: Infinity } })).thenThrows(ValidationError, /"metadata"\.size must be a finite number, got Infinity/);
    spec.given(created).when(update({ metadata: { note: 'a\u0000' } })).thenThrows(ValidationError, /"metadata"\.note contains a control character/);
    const deep = JSON.parse(`${'{"a":'.repeat(20)}1${'}'.repeat(20)}`) as Record<string, unknown>;
    spec.given(created).when(update({ metadata: deep })).thenThrows(ValidationError, /nested more than 16 levels deep/);
    spec.given(created).when(update({ metadata: { big: 'x'.repeat(100_001) } })).thenThrows(ValidationError, /"metadata"\.big is 100001 characters long/);
    spec.given(created).when(update({ csvImportConfig: { '$x': 1 } })).thenThrows(ValidationError, /"csvImportConfig": the key "\$x"/);
    const fine = { version: 2, tags: ['a', 'b'], nested: { note: 'multi\nline', n: -1.5, ok: true, none: null } };
    spec.given(created).when(update({ metadata: fine })).then(updated({ metadata: fine }));
  });

  it('refuses numeric settings that are not finite or out of their range, naming the field', () => {
    spec.given(created).when(update({ dspPageSize: Number.NaN })).thenThrows(ValidationError, /"dspPageSize" must be a finite number, got NaN/);
    spec.given(created).when(update({ dspPageSize: 1001 })).thenThrows(ValidationError, /"dspPageSize" must be from 1 to 1000/);
    spec.given(created).when(update({ gettingStartedStep: 1.5 })).thenThrows(ValidationError, /"gettingStartedStep" must be a whole number/);
    spec.given(created).when(update({ versioningStorageSizeMib: Infinity })).thenThrows(ValidationError, /"versioningStorageSizeMib" must be a finite number/);
    spec.given(created).when(update({ defaultImpulseId: 0 })).thenThrows(ValidationError, /"defaultImpulseId" must be from 1/);
    spec.given(created).when(update({ performance: { trainJobRamMb: 1e308 } })).thenThrows(ValidationError, /"performance\.trainJobRamMb" must be from 256 to 1000000, got 1e\+308/);
    spec.given(created).when(update({ defaultImpulseId: null })).then(updated({ defaultImpulseId: null }));
    spec
      .given(created)
      .when(update({ targetConstraints: { targetDevices: [], applicationBudgets: [{ latencyPerInferenceMs: { maximum: Number.NaN } }] } }))
      .thenThrows(ValidationError, /latencyPerInferenceMs\.maximum must be a finite number, got NaN/);
    spec
      .given(created)
      .when(update({ datasetSplitOptions: { trainingSplitRatio: Number.NaN, testingSplitRatio: 0.2 } }))
      .thenThrows(ValidationError, /"datasetSplitOptions.trainingSplitRatio" must be between 0 and 1/);
  });

  it('refuses key names, key values and HMAC keys with hidden characters or over their length', () => {
    spec.given(created).when(addApiKey({ name: 'CI\u202E' })).thenThrows(ValidationError, /^"name" contains an invisible formatting character/);
    spec.given(created).when(addApiKey({ key: `ei_${'k'.repeat(300)}` })).thenThrows(ValidationError, /^"apiKey" is 303 characters long; at most 256/);
    spec.given(created).when(addApiKey({ key: 'ei_0123456789abcdef\u0000' })).thenThrows(ValidationError, /^"apiKey" contains a control character/);
    spec.given(created).when(addHmacKey({ name: 'signing\u0007' })).thenThrows(ValidationError, /^"name" contains a control character/);
    spec.given(created).when(addHmacKey({ hmacKey: 'secret\u2067' })).thenThrows(ValidationError, /^"hmacKey" contains an invisible formatting character/);
  });

  it('refuses an expiry or a time that is not a valid date', () => {
    spec.given(created).when(addApiKey({ expires: new Date(8.64e15 + 1) })).thenThrows(ValidationError, /not a valid date/);
    spec.given(created).when(addApiKey({ expires: new Date(Date.parse('+020000-01-01T00:00:00.000Z')) })).thenThrows(ValidationError, /"ttl" \(the expiry it gives\) must be between 1970 and 9999/);
    spec.given([]).when({ ...create(), data: { ...(create().data as object), now: new Date(Number.NaN) } } as ProjectCommand).thenThrows(ValidationError, /now is not a valid date/);
  });
});
