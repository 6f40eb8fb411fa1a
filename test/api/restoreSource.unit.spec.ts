import { describe, expect, it } from 'vitest';
import { restoreSource, type RestoreSourceDeps } from '../../api/routes/restoreSource';
import type { Principal } from '../../api/auth/principal';
import { NotFoundError } from '../../domain/shared/errors';

// Project 1 (Ada collaborates) holds version 10; project 2 is Bob's; key "k1" is project 1's, "k2" project 2's.
const deps = {
  projects: { byId: async (id: number) => (id === 1 ? { id: 1, collaboratorIds: [5] } : id === 2 ? { id: 2, collaboratorIds: [6] } : null) },
  apiKeys: { live: async (key: string) => (key === 'k1' ? { apiKeyId: 31, projectId: 1, role: 'readonly' } : key === 'k2' ? { apiKeyId: 32, projectId: 2, role: 'admin' } : null) },
  versions: { byId: async (projectId: number, versionId: number) => (projectId === 1 && versionId === 10 ? { versionId: 10, projectId: 1 } : null) },
} as unknown as RestoreSourceDeps;
const user = (id: number) => ({ kind: 'user', user: { id }, via: 'jwt' }) as unknown as Principal;
const refusal = /No version (10|11) of project (1|2|3) is readable with these credentials/;

describe('the source of a restore', () => {
  it('is readable by a collaborator of the source, or with a key of the source project given in the body', async () => {
    await expect(restoreSource(deps, user(5), { projectId: 1, versionId: 10 })).resolves.toMatchObject({ project: { id: 1 }, version: { versionId: 10 } });
    await expect(restoreSource(deps, user(6), { projectId: 1, versionId: 10, projectApiKey: 'k1' })).resolves.toMatchObject({ version: { versionId: 10 } });
  });

  it('answers the same 404 for a stranger, another project\'s key, an unknown key, an unknown project and an unknown version', async () => {
    for (const [caller, request] of [
      [user(6), { projectId: 1, versionId: 10 }],
      [user(6), { projectId: 1, versionId: 10, projectApiKey: 'k2' }],
      [user(5), { projectId: 1, versionId: 10, projectApiKey: 'nope' }],
      [user(5), { projectId: 3, versionId: 10 }],
      [user(5), { projectId: 1, versionId: 11 }],
    ] as const) {
      const outcome = restoreSource(deps, caller, request);
      await expect(outcome).rejects.toBeInstanceOf(NotFoundError);
      await expect(outcome).rejects.toThrow(refusal);
    }
  });
});
