import { projectDecider } from '../../domain/project/projectDecider';
import { projectStream } from '../../domain/project/projectEvents';
import type { DomainEvent } from '../../domain/shared/decider';
import { userDecider } from '../../domain/user/userDecider';
import { userStream } from '../../domain/user/userEvents';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import { API_KEYS } from '../../projections/apiKeys/apiKeyDocument';
import { PROJECTS } from '../../projections/projects/projectDocument';
import { USERS } from '../../projections/users/userDocument';
import type { ReadStore } from '../../stores/readstore/readStore';

/** Every collection the projections write, for snapshots. */
export const READ_MODEL_COLLECTIONS = [USERS, PROJECTS, API_KEYS];

/** A small but complete log, made by the deciders: it holds every event type a projection handles. */
export function sampleLog(): StoredEvent[] {
  const now = new Date('2026-11-25T12:00:00.000Z');
  const batches: [string, DomainEvent[]][] = [];
  for (const [userId, username] of [[1, 'ada'], [2, 'bob']] as const) {
    batches.push([
      userStream(userId),
      userDecider.decide(
        {
          type: 'RegisterUser',
          data: { userId, username, name: username.toUpperCase(), email: `${username}@example.com`, jobTitle: null, companyName: null, passwordHash: 'h', privacyPolicy: true, now },
        },
        userDecider.initialState(),
      ),
    ]);
  }
  for (const [projectId, owner] of [[10, 1], [11, 2]] as const) {
    batches.push([
      projectStream(projectId),
      projectDecider.decide(
        {
          type: 'CreateProject',
          data: {
            projectId,
            name: `project ${projectId}`,
            ownerUserId: owner,
            isPublic: false,
            developmentApiKey: { id: projectId * 10, key: `ei_key${projectId}`, hash: `hash${projectId}` },
            developmentHmacKey: { id: projectId * 10 + 1, key: `hmac${projectId}` },
            now,
          },
        },
        projectDecider.initialState(),
      ),
    ]);
  }
  let position = 0n;
  const log: StoredEvent[] = [];
  for (const [streamId, events] of batches) {
    events.forEach((e, i) => {
      position += 1n;
      log.push({
        id: `00000000-0000-4000-8000-${position.toString().padStart(12, '0')}`,
        type: e.type,
        data: { ...e.data },
        metadata: { actor: 'system:test', correlationId: 'sample', time: now.toISOString() },
        streamId,
        revision: BigInt(i),
        position,
      });
    });
  }
  return log;
}

export async function snapshot(store: ReadStore): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const name of READ_MODEL_COLLECTIONS) out[name] = await store.collection(name).find({}, { sort: { _id: 1 } });
  return out;
}
