import { afterEach, describe, expect, it } from 'vitest';
import { aggregateStream } from '../../commands/aggregateStream';
import { emailDecider } from '../../domain/email/emailDecider';
import { emailStream } from '../../domain/email/emailEvents';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';

const stores: SqliteEventStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

function store(): SqliteEventStore {
  const events = SqliteEventStore.open(':memory:');
  stores.push(events);
  return events;
}

const metadata = { actor: 'system:test', correlationId: 'c1', time: '2026-11-25T10:00:00.000Z' };
const queued = { emailId: 5, userId: 1, projectId: null, from: 'no-reply@example.com', to: 'ada@example.com', subject: 'Hi', bodyText: 'Hi', bodyHTML: '<p>Hi</p>', queued: '2026-11-25T10:00:00.000Z' };

describe('aggregateStream', () => {
  it('gives the initial state, no events and no revision for a stream that does not exist', async () => {
    expect(await aggregateStream(store(), emailStream(5), emailDecider)).toEqual({ state: { status: 'none' }, events: [], revision: undefined });
  });

  it("folds the stream's events in order with the decider, and gives the revision of the last one", async () => {
    const events = store();
    await events.appendToStream(emailStream(5), [{ id: crypto.randomUUID(), type: 'EmailQueued', data: queued, metadata }], 'no_stream');
    const afterQueued = await aggregateStream(events, emailStream(5), emailDecider);
    expect(afterQueued.state).toEqual({ status: 'queued', emailId: 5 });
    expect(afterQueued.revision).toBe(0n);

    await events.appendToStream(emailStream(5), [{ id: crypto.randomUUID(), type: 'EmailSent', data: { emailId: 5, providerResponse: '250 OK', sent: '2026-11-25T10:00:01.000Z' }, metadata }], 0n);
    const afterSent = await aggregateStream(events, emailStream(5), emailDecider);
    expect(afterSent.state).toEqual({ status: 'sent', emailId: 5 });
    expect(afterSent.events.map((e) => e.type)).toEqual(['EmailQueued', 'EmailSent']);
    expect(afterSent.events[0]!.data).toEqual(queued);
    expect(afterSent.revision).toBe(1n);
  });
});
