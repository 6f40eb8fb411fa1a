// Property: no event the deciders can emit, with any value the rules accept, breaks a projection,
// and an event delivered again changes nothing. Events come in per-stream sequences that make sense
// (creation first, then updates and deletions), streams interleaved at random, some events
// delivered twice in a row, and at the end a suffix of the log delivered again, as a crash between
// a handler and its checkpoint does.
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { allProjections } from '../../projections';
import type { Projection } from '../../projections/projection';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import { MongoReadStore } from '../../stores/readstore/mongoReadStore';
import type { Collection, Document, ReadStore } from '../../stores/readstore/readStore';
import { dropMongoDatabases, mongoSkipReason, mongoUrl } from '../support/mongoTestDatabases';
import { snapshot } from '../support/sampleLog';
import { eventGenerators, line, type EventType, type Ids } from './eventArbitraries';
import { fixedLog } from './fixedLog';
import { ProjectionRunner } from '../../projections/projectionRunner';
import pino from 'pino';

interface Step {
  streamId: string;
  type: EventType;
  data: Record<string, unknown>;
}

const ev = (type: EventType, ids: Ids, streamId: string): fc.Arbitrary<Step> =>
  (eventGenerators[type] as (ids: Ids) => fc.Arbitrary<Record<string, unknown>>)(ids).map((data) => ({ streamId, type, data }));
const oneOf = (types: readonly EventType[], ids: Ids, streamId: string) => fc.oneof(...types.map((t) => ev(t, ids, streamId)));
/** `first`, then up to `max` of `middle`, then a prefix of `last` (deletions come last, in order). */
const sequence = (first: fc.Arbitrary<Step>[], middle: fc.Arbitrary<Step> | undefined, last: fc.Arbitrary<Step>[] = [], max = 5) =>
  fc
    .tuple(fc.tuple(...first), middle ? fc.array(middle, { maxLength: max }) : fc.constant([]), fc.tuple(...last), fc.nat({ max: last.length }))
    .map(([a, b, c, n]) => [...a, ...b, ...c.slice(0, n)]);

const DEVICE_UPDATES: EventType[] = ['DeviceRenamed', 'DeviceConnected', 'DeviceDisconnected', 'DeviceSamplingRequested', 'DeviceSamplingProgressed'];

const USER_UPDATES: EventType[] = [
  'ActivationCodeIssued', 'UserActivated', 'PasswordResetRequested', 'PasswordChanged', 'TotpKeyCreated', 'TotpEnabled', 'TotpCleared', 'LoginSucceeded', 'LoginFailed',
  'UserProfileUpdated', 'TermsOfServiceAccepted', 'EulaAccepted', 'NotificationDismissed', 'UserPhotoChanged', 'DeveloperProfileCreated', 'EnterpriseTrialStarted',
  'SubscriptionCheckoutStarted', 'SubscriptionActivated', 'SubscriptionCancellationRequested', 'SubscriptionCancellationUndone', 'SubscriptionCanceled',
];
const PROJECT_UPDATES: EventType[] = ['CollaboratorAdded', 'CollaboratorRemoved', 'CollaboratorInvited', 'CollaboratorInvitationAccepted', 'CollaboratorInvitationDeclined', 'CollaboratorInvitationWithdrawn', 'ApiKeyAdded', 'ApiKeyRevoked', 'HmacKeyAdded', 'HmacKeyRevoked', 'ProjectUpdated'];
const ORGANIZATION_UPDATES: EventType[] = [
  'OrganizationUpdated',
  'OrganizationMemberAdded',
  'OrganizationMemberRemoved',
  'OrganizationMemberRoleSet',
  'OrganizationMemberDatasetsSet',
  'OrganizationMemberInvited',
  'OrganizationMemberInvitationAccepted',
  'OrganizationMemberInvitationDeclined',
  'OrganizationMemberInvitationWithdrawn',
  'OrganizationApiKeyAdded',
  'OrganizationApiKeyRevoked',
];
const IMPULSE_UPDATES: EventType[] = ['ImpulseBlocksReplaced', 'ImpulseUpdated', 'DspConfigSet', 'DspBlockCleared', 'BlockIdIssued'];

/** Key ids are drawn once, as the deciders do: each added key gets the next id; revocations name any. */
function freshKeyIds(steps: Step[], base: number): Step[] {
  let api = base;
  let hmac = base;
  return steps.map((step) => {
    if (step.type === 'ApiKeyAdded') {
      api += 1;
      return { ...step, data: { ...step.data, apiKeyId: api, keyHash: api.toString(16).padStart(64, '0') } };
    }
    if (step.type === 'HmacKeyAdded') return { ...step, data: { ...step.data, hmacKeyId: (hmac += 1) } };
    return step;
  });
}

/** An impulse is created once (a replay is another matter, tested apart). */
function createdOnce(steps: Step[]): Step[] {
  const created = new Set<unknown>();
  return steps.filter((step) => step.type !== 'ImpulseCreated' || (!created.has(step.data.impulseId) && created.add(step.data.impulseId)));
}

/** Two users with an organization and an OAuth client each, two projects with their keys, samples, devices, impulses, e-mails. */
const scenario: fc.Arbitrary<{ creations: Step[][]; streams: Step[][] }> = fc.tuple(line(128), line(128)).chain(([deviceA, deviceB]) => {
  const creations: fc.Arbitrary<Step[]>[] = [];
  const streams: fc.Arbitrary<Step[]>[] = [];
  for (const userId of [1, 2]) {
    const ids: Ids = { userId, projectId: userId, organizationId: 100 + userId, id: 200 + userId, otherUserId: 3 - userId, deviceId: deviceA };
    creations.push(sequence([ev('UserRegistered', ids, `user-${userId}`)], undefined));
    streams.push(sequence([], oneOf(USER_UPDATES, ids, `user-${userId}`), [ev('UserDeleted', ids, `user-${userId}`)], 6));
    const organization = `organization-${ids.organizationId}`;
    creations.push(sequence([ev('OrganizationCreated', ids, organization)], undefined));
    streams.push(sequence([], oneOf(ORGANIZATION_UPDATES, ids, organization), [ev('OrganizationDeleted', ids, organization)], 6));
    const whitelabel = `whitelabel-${ids.organizationId}`;
    streams.push(sequence([ev('WhitelabelCreated', ids, whitelabel)], ev('WhitelabelUpdated', ids, whitelabel), [ev('WhitelabelDeleted', ids, whitelabel)], 3));
    const clientIds = { ...ids, id: 90_000 + userId };
    const client = `oauth-client-client${clientIds.id.toString(16).padStart(16, '0')}`;
    streams.push(sequence([ev('OAuthClientRegistered', clientIds, client)], undefined, [ev('OAuthClientDeleted', clientIds, client)]));
    const artifact = `oauth-code-${'h'.repeat(42)}${userId}`;
    streams.push(sequence([ev('OAuthArtifactSaved', ids, artifact)], ev('OAuthArtifactConsumed', ids, artifact), [ev('OAuthArtifactEnded', ids, artifact)], 1));
  }
  for (const projectId of [1, 2]) {
    const deviceId = projectId === 1 ? deviceA : deviceB;
    const base: Ids = { userId: projectId, projectId, organizationId: 100 + projectId, id: 0, otherUserId: 3 - projectId, deviceId };
    const stream = `project-${projectId}`;
    const keyId = fc.constantFrom(projectId * 10 + 1, projectId * 10 + 2);
    creations.push(sequence([ev('ProjectCreated', base, stream)], undefined));
    streams.push(
      sequence(
        [],
        keyId.chain((id) => oneOf(PROJECT_UPDATES, { ...base, id }, stream)),
        [ev('ProjectDeleted', base, stream), ev('ProjectFullyDeleted', base, stream), ev('ProjectBlobsPurged', base, stream)],
        6,
      ).map((steps) => freshKeyIds(steps, projectId * 10)),
    );
    streams.push(sequence([], ev('ApiKeyUsed', { ...base, id: projectId * 10 + 1 }, `apikey-usage-${projectId * 10 + 1}`), [], 2));
    for (const sampleId of [projectId * 100 + 1, projectId * 100 + 2, projectId * 100 + 3]) {
      const ids = { ...base, id: sampleId };
      streams.push(sequence([ev('SampleIngested', ids, `sample-${sampleId}`)], undefined, [ev('SampleDeleted', ids, `sample-${sampleId}`)]));
    }
    // Not deviceStream(): it URI-encodes the id, which throws on a lone surrogate (textProblem accepts those).
    const device = `device-${projectId}-${projectId === 1 ? 'a' : 'b'}`;
    const deviceIds = { ...base, id: projectId * 1000 };
    streams.push(sequence([ev('DeviceCreated', deviceIds, device)], oneOf(DEVICE_UPDATES, deviceIds, device), [ev('DeviceDeleted', deviceIds, device), ev('DeviceCreated', deviceIds, device)], 3));
    const impulses = `impulses-${projectId}`;
    const impulseId = fc.constantFrom(projectId * 10_000 + 1, projectId * 10_000 + 2);
    streams.push(
      sequence(
        [ev('ImpulseCreated', { ...base, id: projectId * 10_000 + 1 }, impulses)],
        impulseId.chain((id) => fc.oneof(oneOf(IMPULSE_UPDATES, { ...base, id }, impulses), ev('ImpulseCreated', { ...base, id: projectId * 10_000 + 2 }, impulses))),
        [ev('ImpulseDeleted', { ...base, id: projectId * 10_000 + 1 }, impulses)],
        5,
      ).map(createdOnce),
    );
    const jobIds = { ...base, id: 60_000 + projectId };
    const job = `job-${jobIds.id}`;
    streams.push(
      sequence(
        [ev('JobRequested', jobIds, job), ev('JobStarted', jobIds, job)],
        oneOf(['JobOutputWritten', 'JobCancelRequested', 'JobStarted', 'JobHeartbeat', 'JobNotificationsUpdated'], jobIds, job),
        [ev('JobFinished', jobIds, job), ev('JobNotificationsPlanned', jobIds, job), ev('JobNotificationsUpdated', jobIds, job)],
        4,
      ),
    );
    const dspIds = { ...base, id: projectId * 10_000 + 3 };
    const features = `dsp-features-${projectId}-${dspIds.id}`;
    streams.push(sequence([ev('DspFeaturesGenerated', dspIds, features)], ev('DspFeaturesGenerated', dspIds, features), [], 2));
    const anomalyIds = { ...base, id: projectId * 10_000 + 4 };
    streams.push(sequence([], oneOf(['AnomalySettingsChanged', 'AnomalyModelTrained'], anomalyIds, `anomaly-${projectId}-${anomalyIds.id}`), [], 3));
    const kerasIds = { ...base, id: projectId * 10_000 + 5 };
    const keras = `keras-${projectId}-${kerasIds.id}`;
    streams.push(sequence([], oneOf(['KerasSettingsSet', 'KerasModelTrained'], kerasIds, keras), [], 3));
    streams.push(sequence([], ev('DeploymentBuilt', base, `deployment-${projectId}`), [], 3));
    streams.push(sequence([], ev('ModelTested', base, `model-testing-${projectId}`), [], 3));
    const versionIds = { ...base, id: projectId * 10_000 + 6 };
    streams.push(sequence([ev('VersionCreated', versionIds, `versions-${projectId}`)], oneOf(['VersionUpdated', 'VersionRestoreStarted'], versionIds, `versions-${projectId}`), [ev('VersionDeleted', versionIds, `versions-${projectId}`)], 3));
    streams.push(sequence([], ev('OptimizeConfigSet', base, `optimize-config-${projectId}`), [], 3));
    const runIds = { ...base, id: 70_000 + projectId };
    const tunerRun = `tuner-run-${projectId}-${runIds.id}`;
    streams.push(
      sequence(
        [ev('TunerRunStarted', runIds, tunerRun)],
        oneOf(['TunerTrialPlanned', 'TunerTrialStarted', 'TunerTrialEpoch', 'TunerTrialFinished', 'TunerRunRenamed'], runIds, tunerRun),
        [ev('TunerRunEnded', runIds, tunerRun), ev('TunerRunRenamed', runIds, tunerRun), ev('TunerTrialImpulseAdded', runIds, tunerRun)],
        4,
      ),
    );
    const emailIds = { ...base, id: 50_000 + projectId };
    streams.push(sequence([ev('EmailQueued', emailIds, `email-${emailIds.id}`)], oneOf(['EmailSent', 'EmailNotSent'], emailIds, `email-${emailIds.id}`), [], 2));
  }
  // The log's own checkpoints: no projection reads them, and none may trip on them.
  const audit: Ids = { userId: 1, projectId: 1, organizationId: 101, id: 0, otherUserId: 2, deviceId: deviceA };
  streams.push(sequence([], ev('LogCheckpointRecorded', audit, 'audit-log'), [], 2));
  return fc.record({ creations: fc.tuple(...creations), streams: fc.tuple(...streams) });
});

/** The creations in a random order, then the other streams interleaved at random, each in its own order. */
const log = scenario.chain(({ creations, streams }) => {
  const total = streams.reduce((n, s) => n + s.length, 0);
  return fc
    .tuple(fc.shuffledSubarray(creations, { minLength: creations.length }), fc.array(fc.nat(), { minLength: total, maxLength: total }))
    .map(([firsts, picks]) => {
      const queues = streams.map((s) => [...s]).filter((q) => q.length > 0);
      const out: Step[] = firsts.flat();
      for (const pick of picks) {
        const live = queues.filter((q) => q.length > 0);
        out.push(live[pick % live.length]!.shift()!);
      }
      return out;
    });
});

const run = fc.record({
  steps: log,
  /** Positions (modulo the log's length) of events delivered twice in a row. */
  twice: fc.array(fc.nat(), { maxLength: 4 }),
  /** Where the final redelivery starts (modulo the log's length). */
  suffixFrom: fc.nat(),
});

function storedEvents(steps: readonly Step[]): StoredEvent[] {
  const revisions = new Map<string, bigint>();
  return steps.map((step, i) => {
    const revision = revisions.get(step.streamId) ?? 0n;
    revisions.set(step.streamId, revision + 1n);
    return {
      id: randomUUID(),
      type: step.type,
      data: step.data,
      metadata: { actor: 'system:test', correlationId: 'property', time: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString() },
      streamId: step.streamId,
      revision,
      position: BigInt(i + 1),
    };
  });
}

/** A read store that records the collections written through it, to hold projections to `writes`. */
function recordingWrites(store: ReadStore, written: Set<string>): ReadStore {
  return {
    ...store,
    getCheckpoint: (name) => store.getCheckpoint(name),
    setCheckpoint: (name, position) => store.setCheckpoint(name, position),
    commit: (ops, checkpoints) => {
      for (const op of ops) written.add(op.collection);
      return store.commit(ops, checkpoints);
    },
    dropAll: () => store.dropAll(),
    close: () => store.close(),
    collection<T extends Document = Document>(name: string): Collection<T> {
      const c = store.collection<T>(name);
      const write = <A extends unknown[], R>(f: (...args: A) => Promise<R>) => (...args: A) => {
        written.add(name);
        return f(...args);
      };
      return {
        find: (filter, options) => c.find(filter, options),
        findOne: (filter) => c.findOne(filter),
        count: (filter) => c.count(filter),
        updateOne: write((filter, update, options) => c.updateOne(filter, update, options)),
        updateMany: write((filter, update) => c.updateMany(filter, update)),
        deleteOne: write((filter) => c.deleteOne(filter)),
        deleteMany: write((filter) => c.deleteMany(filter)),
      };
    },
  };
}

const seenTypes = new Set<string>();

async function deliver(event: StoredEvent, store: ReadStore, writes: Map<Projection, Set<string>>): Promise<void> {
  for (const p of allProjections) {
    if (!p.handles.has(event.type)) continue;
    try {
      await p.apply(event, recordingWrites(store, writes.get(p)!));
    } catch (error) {
      throw new Error(`projection ${p.name} threw on ${event.type} at ${event.position} (${event.streamId}): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
}

async function check(store: ReadStore, { steps, twice, suffixFrom }: { steps: Step[]; twice: number[]; suffixFrom: number }): Promise<void> {
  await store.dropAll();
  const events = storedEvents(steps);
  const writes = new Map(allProjections.map((p) => [p, new Set<string>()]));
  const again = new Set(twice.map((n) => n % events.length));
  for (const [i, event] of events.entries()) {
    seenTypes.add(event.type);
    await deliver(event, store, writes);
    if (!again.has(i)) continue;
    const before = await snapshot(store);
    await deliver(event, store, writes);
    expect(await snapshot(store), `${event.type} at ${event.position} delivered twice`).toEqual(before);
  }
  const final = await snapshot(store);
  for (const event of events.slice(suffixFrom % events.length)) await deliver(event, store, writes);
  expect(await snapshot(store), `redelivery from ${(suffixFrom % events.length) + 1}`).toEqual(final);
  // What a projection writes is its own.
  for (const [p, written] of writes) {
    for (const name of written) expect(p.writes, `${p.name} writes ${name}`).toContain(name);
  }
}

const batched = fc.record({
  steps: log,
  batchSize: fc.integer({ min: 1, max: 40 }),
  /** Where a second run starts again from (modulo the log's length), as after a crash before a commit. */
  replayFrom: fc.nat(),
});

/**
 * The runner applies the log in batches through its write buffer; the same log delivered event by
 * event straight to a second store of the same kind must give the same documents, and so must a
 * second run that replays a suffix of the log in batches.
 */
async function checkBatched(buffered: ReadStore, direct: ReadStore, { steps, batchSize, replayFrom }: { steps: Step[]; batchSize: number; replayFrom: number }): Promise<void> {
  await buffered.dropAll();
  await direct.dropAll();
  const events = storedEvents(steps);
  const writes = new Map(allProjections.map((p) => [p, new Set<string>()]));
  for (const event of events) await deliver(event, direct, writes);
  const expected = await snapshot(direct);
  const source = fixedLog(events);
  const silent = pino({ level: 'silent' });
  const first = new ProjectionRunner(source, buffered, allProjections, silent, 10, 10, { batchSize });
  await first.start();
  await first.stop();
  expect(await first.failures()).toEqual([]);
  expect(await snapshot(buffered), `in batches of ${batchSize}`).toEqual(expected);
  // Every checkpoint back to an earlier position: that suffix is applied again, in batches.
  const from = BigInt(replayFrom % events.length);
  for (const p of allProjections) await buffered.setCheckpoint(p.checkpoint, from, await source.identity());
  const again = new ProjectionRunner(source, buffered, allProjections, silent, 10, 10, { batchSize });
  await again.start();
  await again.stop();
  expect(await again.failures()).toEqual([]);
  expect(await snapshot(buffered), `in batches of ${batchSize}, replayed after ${from}`).toEqual(expected);
  for (const p of allProjections) expect(await buffered.getCheckpoint(p.checkpoint)).toBe(events.at(-1)!.position);
}

describe('every projection, fed events of every type the deciders can emit', () => {
  it('has a generator for every event type the domain declares', () => {
    const domain = path.resolve(__dirname, '../../domain');
    const declared = new Set<string>();
    for (const folder of readdirSync(domain, { withFileTypes: true }).filter((d) => d.isDirectory())) {
      for (const file of readdirSync(path.join(domain, folder.name)).filter((f) => f.endsWith('Events.ts'))) {
        for (const match of readFileSync(path.join(domain, folder.name, file), 'utf8').matchAll(/DomainEvent<\s*'([A-Za-z]+)'/g)) declared.add(match[1]!);
      }
    }
    expect(declared.size).toBeGreaterThan(40);
    expect([...declared].sort()).toEqual(Object.keys(eventGenerators).sort());
  });

  it('on the memory read store: no handler throws, and an event delivered again changes nothing', async () => {
    const store = new MemoryReadStore();
    await fc.assert(fc.asyncProperty(run, (r) => check(store, r)), { numRuns: 60 });
    // The scenarios reach every event type, so the property covered each of them.
    expect([...seenTypes].sort()).toEqual(Object.keys(eventGenerators).sort());
  }, 120_000);

  const onMongo = mongoSkipReason ? it.skip : it;
  const database = `t_props_${randomUUID().slice(0, 8)}`;
  afterAll(() => dropMongoDatabases(mongoSkipReason ? [] : [database]));
  onMongo(`on MongoDB: no handler throws, and an event delivered again changes nothing${mongoSkipReason ? ` (skipped: ${mongoSkipReason})` : ''}`, async () => {
    const store = await MongoReadStore.connect(mongoUrl!, database);
    try {
      // No shrinking: on a MongoDB-protocol server each try takes seconds; the first failure is reported as found.
      await fc.assert(fc.asyncProperty(run, (r) => check(store, r)), { numRuns: 10, endOnFailure: true });
    } finally {
      await store.close();
    }
  }, 300_000);

  it('on the memory read store: applied in batches through the write buffer, gives the documents of applying it event by event', async () => {
    const [buffered, direct] = [new MemoryReadStore(), new MemoryReadStore()];
    await fc.assert(fc.asyncProperty(batched, (r) => checkBatched(buffered, direct, r)), { numRuns: Number(process.env.PROP_RUNS ?? 60), endOnFailure: true });
  }, 120_000);

  const batchDatabases = [`t_batch_${randomUUID().slice(0, 8)}`, `t_batch_${randomUUID().slice(0, 8)}`];
  afterAll(() => dropMongoDatabases(mongoSkipReason ? [] : batchDatabases));
  onMongo(`on MongoDB: applied in batches through the write buffer, gives the documents of applying it event by event${mongoSkipReason ? ` (skipped: ${mongoSkipReason})` : ''}`, async () => {
    const [buffered, direct] = await Promise.all(batchDatabases.map((db) => MongoReadStore.connect(mongoUrl!, db)));
    try {
      await fc.assert(fc.asyncProperty(batched, (r) => checkBatched(buffered!, direct!, r)), { numRuns: 8, endOnFailure: true });
    } finally {
      await Promise.all([buffered!.close(), direct!.close()]);
    }
  }, 300_000);
});
