import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { SMTPServer, type SMTPServerError } from 'smtp-server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CommandContext } from '../../commands/commandContext';
import { queueEmail, type QueueEmailInput } from '../../commands/emails/queueEmail';
import { IdAllocator } from '../../commands/idAllocator';
import { startSagas } from '../../commands/sagas';
import { EMAIL_DELIVERY_SAGA, emailDeliverySaga, NO_SMTP_SERVER_REASON } from '../../commands/sagas/emailDeliverySaga';
import { sagaCheckpointName, SagaRunner, type Saga } from '../../commands/sagas/sagaRunner';
import { emailStream } from '../../domain/email/emailEvents';
import { sealedFieldsByEventType } from '../../domain/personalData';
import { emailsProjection } from '../../projections/emails/emailsProjection';
import { EmailQueries } from '../../projections/emails/emailQueries';
import { ProjectionRunner } from '../../projections/projectionRunner';
import type { NewEvent, StoredEvent } from '../../stores/eventstore/eventStore';
import { SqliteEventStore } from '../../stores/eventstore/sqliteEventStore';
import { SealingEventStore } from '../../stores/keystore/sealingEventStore';
import { SqliteKeyStore } from '../../stores/keystore/sqliteKeyStore';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';

const log = pino({ level: 'silent' });
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function stores() {
  const raw = SqliteEventStore.open(':memory:');
  const keys = SqliteKeyStore.open(':memory:');
  const events = new SealingEventStore(raw, keys, sealedFieldsByEventType);
  cleanups.push(async () => {
    await events.close();
    await keys.close();
  });
  return { raw, events, readStore: new MemoryReadStore(), ids: new IdAllocator(events) };
}

interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP server on a random local port that keeps what it receives. */
async function smtpServer(options: { rejectRecipients?: boolean } = {}): Promise<{ url: string; received: ReceivedMail[] }> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    // Plain text on the loopback: nodemailer would rightly refuse the built-in self-signed certificate.
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (!options.rejectRecipients) return callback();
      const error: SMTPServerError = Object.assign(new Error(`Mailbox ${address.address} unavailable`), { responseCode: 550 });
      callback(error);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback(null, `Message accepted as mail-${received.length}`);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`, received };
}

const ctx = (): CommandContext => ({ actor: 'user:7', correlationId: 'req-1', now: new Date('2026-11-25T12:00:00.000Z') });

const mail = (overrides: Partial<QueueEmailInput> = {}): QueueEmailInput => ({
  userId: 7,
  projectId: 12,
  from: 'noreply@studio.test',
  to: 'ada@example.com',
  subject: 'Your job finished',
  bodyText: 'Job 5 finished.',
  bodyHTML: '<p>Job 5 finished.</p>',
  ...overrides,
});

/** Waits until the e-mail's stream holds its outcome, and returns that event. */
async function outcomeOf(events: SealingEventStore, emailId: number): Promise<StoredEvent> {
  return vi.waitFor(
    async () => {
      const stream = await events.readStream(emailStream(emailId));
      expect(stream).toHaveLength(2);
      return stream[1]!;
    },
    { timeout: 10_000, interval: 20 },
  );
}

async function withReadModel(s: ReturnType<typeof stores>): Promise<ProjectionRunner> {
  const runner = new ProjectionRunner(s.events, s.readStore, [emailsProjection], log);
  await runner.start();
  cleanups.push(() => runner.stop());
  return runner;
}

async function sagas(s: ReturnType<typeof stores>, smtpUrl: string | undefined) {
  const running = await startSagas({ events: s.events, readStore: s.readStore, log, smtpUrl });
  cleanups.push(() => running.stop());
  return running;
}

describe('the e-mail delivery saga', () => {
  it('sends a queued e-mail through the SMTP server and records its response, and the read model shows it sent', async () => {
    const s = stores();
    const smtp = await smtpServer();
    const projections = await withReadModel(s);
    await sagas(s, smtp.url);

    const { emailId } = await queueEmail({ events: s.events, ids: s.ids }, mail(), ctx());
    const outcome = await outcomeOf(s.events, emailId);

    expect(outcome.type).toBe('EmailSent');
    expect(outcome.data).toMatchObject({ emailId, providerResponse: '250 Message accepted as mail-1' });
    const [queued] = await s.events.readStream(emailStream(emailId));
    expect(outcome.metadata).toMatchObject({ actor: `system:${EMAIL_DELIVERY_SAGA}`, correlationId: 'req-1', causationId: queued!.id });

    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0]).toMatchObject({ from: 'noreply@studio.test', to: ['ada@example.com'] });
    expect(smtp.received[0]!.raw).toContain('Subject: Your job finished');
    expect(smtp.received[0]!.raw).toContain('Job 5 finished.');
    expect(smtp.received[0]!.raw).toContain('text/html');

    expect(await projections.waitFor(outcome.position, 5000)).toBe(true);
    expect(await new EmailQueries(s.readStore).byId(emailId)).toMatchObject({
      id: emailId,
      userId: 7,
      projectId: 12,
      to: 'ada@example.com',
      subject: 'Your job finished',
      sent: true,
      providerResponse: '250 Message accepted as mail-1',
    });
  });

  it('keeps the recipient and the bodies sealed in the log', async () => {
    const s = stores();
    const { emailId } = await queueEmail({ events: s.events, ids: s.ids }, mail({ userId: null, to: 'support@studio.test' }), ctx());
    const [raw] = await s.raw.readStream(emailStream(emailId));
    for (const field of ['to', 'bodyText', 'bodyHTML']) expect(String(raw!.data[field])).toMatch(/^sealed:v1:/);
    expect(raw!.data.subject).toBe('Your job finished');
    const [opened] = await s.events.readStream(emailStream(emailId));
    expect(opened!.data.to).toBe('support@studio.test');
  });

  it('records an e-mail as not sent, with the reason, when no SMTP server is configured', async () => {
    const s = stores();
    const projections = await withReadModel(s);
    await sagas(s, undefined);

    const { emailId } = await queueEmail({ events: s.events, ids: s.ids }, mail(), ctx());
    const outcome = await outcomeOf(s.events, emailId);

    expect(outcome.type).toBe('EmailNotSent');
    expect(outcome.data).toMatchObject({ emailId, reason: NO_SMTP_SERVER_REASON });
    expect(await projections.waitFor(outcome.position, 5000)).toBe(true);
    expect(await new EmailQueries(s.readStore).byId(emailId)).toMatchObject({ sent: false, providerResponse: NO_SMTP_SERVER_REASON });
  });

  it('records an e-mail as not sent, with the server’s reason, when the server refuses the recipient', async () => {
    const s = stores();
    const smtp = await smtpServer({ rejectRecipients: true });
    await sagas(s, smtp.url);

    const { emailId } = await queueEmail({ events: s.events, ids: s.ids }, mail(), ctx());
    const outcome = await outcomeOf(s.events, emailId);

    expect(outcome.type).toBe('EmailNotSent');
    const reason = String(outcome.data.reason);
    expect(reason).toMatch(/550/);
    expect(reason).toMatch(/Mailbox ada@example.com unavailable/);
    expect(reason).not.toMatch(/\n\s+at /);
    expect(smtp.received).toHaveLength(0);
  });

  it('does not send again when it restarts from its checkpoint, nor when it sees the e-mail again without one', async () => {
    const s = stores();
    const smtp = await smtpServer();
    const first = await startSagas({ events: s.events, readStore: s.readStore, log, smtpUrl: smtp.url });
    const { emailId } = await queueEmail({ events: s.events, ids: s.ids }, mail(), ctx());
    const sent = await outcomeOf(s.events, emailId);
    await first.stop();
    expect(await s.readStore.getCheckpoint(sagaCheckpointName(EMAIL_DELIVERY_SAGA))).toBeGreaterThanOrEqual(sent.position);

    // Restarted from the stored checkpoint: only the new e-mail goes out.
    await sagas(s, smtp.url);
    const second = await queueEmail({ events: s.events, ids: s.ids }, mail({ to: 'bob@example.com' }), ctx());
    await outcomeOf(s.events, second.emailId);
    expect(smtp.received.map((m) => m.to)).toEqual([['ada@example.com'], ['bob@example.com']]);

    // A runner whose checkpoint was lost (crash before it was stored, dropped read store) sees both
    // EmailQueued again: the recorded outcomes keep it from sending.
    const forgetful = new MemoryReadStore();
    const again = await startSagas({ events: s.events, readStore: forgetful, log, smtpUrl: smtp.url });
    cleanups.push(() => again.stop());
    const head = await s.events.headPosition();
    await vi.waitFor(async () => expect(await forgetful.getCheckpoint(sagaCheckpointName(EMAIL_DELIVERY_SAGA))).toBe(head), { timeout: 5000, interval: 20 });
    expect(smtp.received).toHaveLength(2);
    expect(await s.events.readStream(emailStream(emailId))).toHaveLength(2);
  });

  it('sends once and records one outcome when it reacts to the same event twice', async () => {
    const s = stores();
    const smtp = await smtpServer();
    const saga = emailDeliverySaga({ events: s.events, smtpUrl: smtp.url, log });
    cleanups.push(async () => saga.close?.());
    const { emailId } = await queueEmail({ events: s.events, ids: s.ids }, mail(), ctx());
    const [queued] = await s.events.readStream(emailStream(emailId));
    await saga.react(queued!);
    await saga.react(queued!);
    expect(smtp.received).toHaveLength(1);
    expect((await s.events.readStream(emailStream(emailId))).map((e) => e.type)).toEqual(['EmailQueued', 'EmailSent']);
  });

  it('refuses an SMTP URL of another scheme', () => {
    const s = stores();
    expect(() => emailDeliverySaga({ events: s.events, smtpUrl: 'http://mail.example.com', log })).toThrow(/smtp:\/\/ or smtps:\/\//);
  });
});

const event = (type: string, n: number): NewEvent => ({
  id: randomUUID(),
  type,
  data: { n },
  metadata: { actor: 'system:test', correlationId: 'c', time: new Date().toISOString() },
});

/** Records the `Tick` events it reacts to; fails once on the ones listed; never runs two reactions at once. */
function recordingSaga(failOnce: number[] = []): Saga & { seen: number[]; attempts: number[]; overlapped: boolean } {
  const failures = new Set(failOnce);
  let active = 0;
  const saga = {
    name: 'recording',
    handles: new Set(['Tick']),
    seen: [] as number[],
    attempts: [] as number[],
    overlapped: false,
    async react(e: StoredEvent) {
      const n = Number(e.data.n);
      active += 1;
      if (active > 1) saga.overlapped = true;
      try {
        saga.attempts.push(n);
        // Later events finish sooner if reactions ever ran side by side.
        await new Promise((resolve) => setTimeout(resolve, 10 - n));
        if (failures.delete(n)) throw new Error(`reaction to ${n} failed`);
        saga.seen.push(n);
      } finally {
        active -= 1;
      }
    },
  };
  return saga;
}

describe('the saga runner', () => {
  it('reacts to the events it handles one at a time, in log order, and stores its checkpoint', async () => {
    const s = stores();
    await s.raw.appendToStream('t-1', [event('Tick', 1), event('Other', 0), event('Tick', 2), event('Tick', 3)], 'no_stream');
    const saga = recordingSaga();
    const runner = new SagaRunner(s.raw, s.readStore, saga, log);
    runner.start();
    cleanups.push(() => runner.stop());
    const { position } = await s.raw.appendToStream('t-1', [event('Tick', 4), event('Other', 0)], 3n);
    await vi.waitFor(async () => expect(await s.readStore.getCheckpoint('saga:recording')).toBe(position), { timeout: 5000, interval: 10 });
    expect(saga.seen).toEqual([1, 2, 3, 4]);
    expect(saga.overlapped).toBe(false);
  });

  it('stops at a failing reaction, handles nothing after it, and resumes from its checkpoint after a delay', async () => {
    const s = stores();
    await s.raw.appendToStream('t-1', [event('Tick', 1), event('Tick', 2), event('Other', 0), event('Tick', 3)], 'no_stream');
    const saga = recordingSaga([2]);
    const runner = new SagaRunner(s.raw, s.readStore, saga, log, 20);
    runner.start();
    cleanups.push(() => runner.stop());
    const head = await s.raw.headPosition();
    await vi.waitFor(async () => expect(await s.readStore.getCheckpoint('saga:recording')).toBe(head), { timeout: 5000, interval: 10 });
    expect(saga.attempts).toEqual([1, 2, 2, 3]);
    expect(saga.seen).toEqual([1, 2, 3]);
  });

  it('resumes after a stop from the checkpoint it stored, reacting to nothing twice', async () => {
    const s = stores();
    await s.raw.appendToStream('t-1', [event('Tick', 1), event('Tick', 2)], 'no_stream');
    const before = recordingSaga();
    const first = new SagaRunner(s.raw, s.readStore, before, log);
    first.start();
    await vi.waitFor(() => expect(before.seen).toEqual([1, 2]), { timeout: 5000, interval: 10 });
    await first.stop();
    await s.raw.appendToStream('t-1', [event('Tick', 3)], 1n);
    const after = recordingSaga();
    const second = new SagaRunner(s.raw, s.readStore, after, log);
    second.start();
    cleanups.push(() => second.stop());
    await vi.waitFor(() => expect(after.seen).toEqual([3]), { timeout: 5000, interval: 10 });
  });

  it('stops promptly, while idle at the head of the log and while waiting to retry', async () => {
    const s = stores();
    await s.raw.appendToStream('t-1', [event('Tick', 1)], 'no_stream');
    const idle = new SagaRunner(s.raw, s.readStore, recordingSaga(), log);
    idle.start();
    await vi.waitFor(async () => expect(await s.readStore.getCheckpoint('saga:recording')).toBe(1n), { timeout: 5000, interval: 10 });
    let started = Date.now();
    await idle.stop();
    expect(Date.now() - started).toBeLessThan(500);

    const failing = recordingSaga([2]);
    await s.raw.appendToStream('t-1', [event('Tick', 2)], 0n);
    const retrying = new SagaRunner(s.raw, s.readStore, failing, log, 60_000);
    retrying.start();
    await vi.waitFor(() => expect(failing.attempts).toEqual([2]), { timeout: 5000, interval: 10 });
    started = Date.now();
    await retrying.stop();
    expect(Date.now() - started).toBeLessThan(500);
    expect(await s.readStore.getCheckpoint('saga:recording')).toBe(1n);
  });
});
