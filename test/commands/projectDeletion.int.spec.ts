// The full-deletion saga in two steps: blobs only the project uses are set aside, then purged a
// grace period later, unless content another sample took meanwhile must come back.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { handleCommand } from '../../commands/handleCommand';
import { startProjectDeletion } from '../../commands/sagas/projectDeletion';
import { projectDecider } from '../../domain/project/projectDecider';
import { projectStream } from '../../domain/project/projectEvents';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';

const minute = 60_000;
const a = 'a'.repeat(64);
const b = 'b'.repeat(64);
const shared = 'c'.repeat(64);

async function deletedProject(events: SqliteEventStore, now: Date): Promise<void> {
  const ctx = { actor: 'system:test', correlationId: 'test', now };
  await handleCommand(events, projectStream(5), projectDecider, {
    type: 'CreateProject',
    data: { projectId: 5, name: 'Doomed', ownerUserId: 1, isPublic: false, developmentApiKey: { id: 1, key: 'ei_x', hash: 'h' }, developmentHmacKey: { id: 2, key: 'k' }, now },
  }, ctx);
  await handleCommand(events, projectStream(5), projectDecider, { type: 'DeleteProject', data: { scheduledFullDeletionDate: now, now } }, ctx);
}

describe('the project deletion saga', () => {
  it('sets aside what only the project holds, then purges it, restoring content a sample elsewhere took meanwhile', async () => {
    const events = SqliteEventStore.open(':memory:');
    // Now: the saga's own run at start uses the clock too.
    const start = new Date();
    await deletedProject(events, start);
    const calls: string[] = [];
    // `b` turns out to be used elsewhere only after it was set aside (an upload found it stored
    // just before); `shared` is used elsewhere from the start.
    let bTaken = false;
    // What the read model would say, from the log (the saga also runs once on its own at start).
    const last = async (type: string) => (await events.readStream(projectStream(5))).filter((e) => e.type === type).at(-1);
    const saga = startProjectDeletion({
      events,
      due: async () => ((await last('ProjectFullyDeleted')) ? [] : [{ id: 5 }]),
      duePurges: async (before) => {
        const fully = await last('ProjectFullyDeleted');
        if (!fully || (await last('ProjectBlobsPurged')) || Date.parse(String(fully.data.fullDeletionDate)) > before.getTime()) return [];
        return [{ id: 5, quarantinedBlobs: fully.data.quarantinedBlobs as string[] }];
      },
      contentsOf: async () => [a, b, shared],
      usedElsewhere: async (_id, shas) => new Set(shas.filter((sha) => sha === shared || (sha === b && bTaken))),
      blobs: {
        quarantine: async (sha) => (calls.push(`quarantine ${sha[0]}`), true),
        restore: async (sha) => void calls.push(`restore ${sha[0]}`),
        purge: async (sha) => void calls.push(`purge ${sha[0]}`),
      },
      destroyProjectKey: async () => void calls.push('destroy key'),
      log: pino({ level: 'silent' }),
      intervalMs: 3600_000,
      purgeGraceMs: 10 * minute,
    });
    await saga.runOnce(start);
    // The run at start may have done step 1 first: the same outcome, done once.
    const stream = async () => (await events.readStream(projectStream(5))).map((e) => e.type);
    expect(calls).toEqual(['quarantine a', 'quarantine b', 'destroy key']);
    expect((await last('ProjectFullyDeleted'))?.data).toMatchObject({ quarantinedBlobs: [a, b] });

    // Within the grace period nothing is purged.
    await saga.runOnce(new Date(start.getTime() + 5 * minute));
    expect(calls).toHaveLength(3);
    bTaken = true;
    await saga.runOnce(new Date(start.getTime() + 11 * minute));
    expect(calls.slice(3)).toEqual(['purge a', 'restore b']);
    const purged = (await events.readStream(projectStream(5))).find((e) => e.type === 'ProjectBlobsPurged');
    expect(purged?.data).toMatchObject({ purged: [a], restored: [b] });
    expect(await stream()).toEqual(['ProjectCreated', 'CollaboratorAdded', 'ApiKeyAdded', 'HmacKeyAdded', 'ProjectDeleted', 'ProjectFullyDeleted', 'ProjectBlobsPurged']);
    // A repeat (the read model not yet caught up) appends nothing more.
    await saga.runOnce(new Date(start.getTime() + 12 * minute));
    expect((await stream()).filter((t) => t === 'ProjectBlobsPurged')).toHaveLength(1);
    await saga.stop();
    await events.close();
  });
});
