// fast-check generators for every event type the deciders can emit, with values across what the
// rules accept: numbers anywhere in the sampleLimits ranges (edges, -0 where 0 is allowed), texts
// accepted by `textProblem` (odd unicode, near-limit lengths, empty where allowed), and null where
// a sealed field reads back after its key was destroyed. `eventGenerators` is typed over the union
// of every aggregate's events: a new event type without a generator does not compile, and the
// property test also checks the table against the type names declared in domain/*/*Events.ts.
import fc from 'fast-check';
import type { AuditEvent } from '../../domain/audit/auditEvents';
import { SAMPLING_STAGES, type DeviceEvent } from '../../domain/device/deviceEvents';
import { DEPLOYMENT_TARGET_FORMATS } from '../../domain/deployment/deploymentTargets';
import type { WhitelabelEvent, WhitelabelSettings } from '../../domain/whitelabel/whitelabelEvents';
import { NORMALIZE_DATA, type DspFeaturesEvent } from '../../domain/dsp/dspFeaturesEvents';
import type { AnomalyEvent } from '../../domain/learn/anomalyEvents';
import type { KerasEvent } from '../../domain/learn/kerasEvents';
import type { OptimizeConfigEvent } from '../../domain/optimize/optimizeEvents';
import type { TunerRunEvent } from '../../domain/optimize/tunerRunEvents';
import type { TrialImpulse } from '../../domain/optimize/searchSpace';
import { OPTIMIZE_LIMITS, TUNING_ALGORITHMS, type OptimizeSettings } from '../../domain/optimize/optimizeConfig';
import type { TunerSpaceImpulse } from '../../domain/optimize/tunerSpace';
import type { DeploymentEvent } from '../../domain/deployment/deploymentEvents';
import type { VersionEvent } from '../../domain/version/versionEvents';
import { DESCRIPTION_RULE } from '../../domain/version/versionDecider';
import type { ModelTestingEvent } from '../../domain/learn/modelTestingEvents';
import { KERAS_LAYER_TYPES, type KerasSettings } from '../../domain/learn/kerasSettings';
import type { EmailEvent } from '../../domain/email/emailEvents';
import { IMPULSE_TYPES, INPUT_BLOCK_TYPES, LEARN_BLOCK_TYPES } from '../../domain/impulse/blockCatalog';
import type { ImpulseBlocks, ImpulseEvent } from '../../domain/impulse/impulseEvents';
import { JOB_LOG_LEVELS, type JobEvent } from '../../domain/job/jobEvents';
import { ORGANIZATION_API_KEY_ROLES, ORGANIZATION_MEMBER_ROLES, type OrganizationEvent } from '../../domain/organization/organizationEvents';
import { API_KEY_ROLES, type ApiKeyUsed, type ProjectEvent } from '../../domain/project/projectEvents';
import { LABELING_METHODS, MODEL_ENGINES, MODEL_VARIANTS, PROJECT_NAME_MAX, README_MAX_CHARS, type ProjectSettingsChange } from '../../domain/project/projectSettings';
import { MAX_DEVICE_TEXT_LENGTH, MAX_INTERVAL_MS, MAX_PIXEL_SIDE, MAX_SAMPLE_LENGTH_MS, MAX_VALUE_ROWS, MIN_INTERVAL_MS } from '../../domain/sample/sampleLimits';
import { INGESTION_CATEGORIES, type SampleEvent } from '../../domain/sample/sampleEvents';
import { OAUTH_ARTIFACT_KINDS, OAUTH_GRANT_END_CAUSES, type OAuthArtifactEvent } from '../../domain/oauth/oauthArtifactEvents';
import type { OAuthClientEvent } from '../../domain/oauth/oauthClientEvents';
import { textProblem, type TextRule } from '../../domain/shared/textRules';
import { PROJECTS_SORT_ORDERS, type UserEvent } from '../../domain/user/userEvents';
import { EULAS, USER_EXPERIMENTS, USER_NOTIFICATIONS } from '../../api/views/userView';

export type AnyEvent = UserEvent | ProjectEvent | ApiKeyUsed | SampleEvent | DeviceEvent | EmailEvent | ImpulseEvent | OrganizationEvent | JobEvent | DspFeaturesEvent | AnomalyEvent | KerasEvent | DeploymentEvent | VersionEvent | ModelTestingEvent | OptimizeConfigEvent | TunerRunEvent | WhitelabelEvent | AuditEvent | OAuthClientEvent | OAuthArtifactEvent;
export type EventType = AnyEvent['type'];
type DataOf<T extends EventType> = Extract<AnyEvent, { type: T }>['data'];

/** The ids an event refers to, fixed by the stream scenario it belongs to. */
export interface Ids {
  userId: number;
  projectId: number;
  organizationId: number;
  /** The sample, API key, HMAC key, impulse, e-mail or device id of the stream, as fits the event. */
  id: number;
  /** Another user (collaborators, e-mail recipients). */
  otherUserId: number;
  /** A device id (text) of the project. */
  deviceId: string;
}

// Characters that have broken or could break a store or a renderer, all accepted by textProblem.
const ODD = ['😀', '👩‍👩‍👧', 'e\u0301', '\u200b', '\u200d', '\u00a0', '\ufeff', '\uffff', '\ud800', '\udfff', 'שלום', 'مرحبا', '中文', '.', '$', '$where', '__proto__', 'constructor', '<b>', '&amp;', '"', '\\', '`', '%00', ' '];

const unit = fc.oneof({ weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 3 }) }, { weight: 2, arbitrary: fc.constantFrom(...ODD) }, { weight: 1, arbitrary: fc.constantFrom('\t', '\n', '\r\n') });

/** Texts `rule` accepts: mostly short and odd, sometimes within a few characters of the limit. */
export function text(rule: TextRule): fc.Arbitrary<string> {
  const short = fc.array(unit, { maxLength: 8 }).map((parts) => parts.join('').slice(0, rule.max));
  const nearLimit = fc.tuple(fc.array(unit, { minLength: 1, maxLength: 4 }), fc.integer({ min: Math.max(0, rule.max - 3), max: rule.max })).map(([parts, length]) => {
    const chunk = parts.join('') || 'x';
    return chunk.repeat(Math.ceil(length / chunk.length)).slice(0, length);
  });
  const edges = fc.constantFrom('', ' ', 'a', '.', '$', '$x.y');
  return fc
    .oneof({ weight: 6, arbitrary: short }, { weight: 2, arbitrary: nearLimit }, { weight: 1, arbitrary: edges })
    .filter((value) => textProblem(value, 'field', rule) === undefined);
}

export const line = (max: number, allowEmpty = false) => text({ max, allowEmpty });
const paragraph = (max: number) => text({ max, multiline: true, allowEmpty: true });

/** A finite number in [min, max], with the edges (and -0 where 0 is allowed) often. */
export function between(min: number, max: number, options: { integer?: boolean } = {}): fc.Arbitrary<number> {
  const inside = options.integer
    ? fc.integer({ min: Math.ceil(min), max: Math.min(Math.floor(max), Number.MAX_SAFE_INTEGER) })
    : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  const edges = [min, max, ...(min <= 0 && max >= 0 ? [0, -0] : [])];
  return fc.oneof({ weight: 4, arbitrary: inside }, { weight: 1, arbitrary: fc.constantFrom(...edges) });
}

const iso = fc.date({ min: new Date('1970-01-01T00:00:00.000Z'), max: new Date('2100-01-01T00:00:00.000Z'), noInvalidDate: true }).map((d) => d.toISOString());
const hash = fc.stringMatching(/^[0-9a-f]{64}$/);
const uid = fc.integer({ min: 1, max: 2 ** 31 - 1 });
/** Sealed fields read back as null once their key was destroyed (crypto-shredding). */
const sealed = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 5, arbitrary: arb }, { weight: 1, arbitrary: fc.constant(null as unknown as T) });
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

const range = fc.record({ minimum: between(0, 1e12), maximum: between(0, 1e12) }, { requiredKeys: [] });
const memory = fc.record({ ram: fc.record({ fastBytes: range, slowBytes: range }, { requiredKeys: [] }), rom: fc.record({ fastBytes: range, slowBytes: range }, { requiredKeys: [] }) }, { requiredKeys: [] });

const kerasSettings: fc.Arbitrary<KerasSettings> = fc.record({
  visualLayers: fc.array(
    fc.record({ type: fc.constantFrom(...KERAS_LAYER_TYPES), neurons: between(1, 4096, { integer: true }), kernelSize: between(1, 64, { integer: true }), stack: between(1, 8, { integer: true }), dropoutRate: between(0, 0.95), columns: between(1, 1e6, { integer: true }), enabled: fc.constant(false) }, { requiredKeys: ['type'] }),
    { maxLength: 4 },
  ),
  trainingCycles: between(1, 10_000, { integer: true }),
  learningRate: between(1e-6, 10),
  batchSize: between(1, 65_536, { integer: true }),
  trainTestSplit: between(0, 0.9),
  autoClassWeights: fc.boolean(),
  minimumConfidenceRating: between(0, 1),
});

const settingsChange = (ids: Ids): fc.Arbitrary<ProjectSettingsChange> => fc.record(
  {
    name: line(PROJECT_NAME_MAX),
    description: paragraph(10_000),
    logo: fc.option(line(2048), { nil: null }),
    isPublic: fc.boolean(),
    publicProjectListed: fc.boolean(),
    labelingMethod: fc.constantFrom(...LABELING_METHODS),
    metadata: fc.dictionary(line(128), fc.oneof(line(1024, true), between(-1e12, 1e12), fc.boolean()), { maxKeys: 4 }),
    readme: fc.oneof(fc.constant(null), fc.constant(''), paragraph(README_MAX_CHARS)),
    dspPageSize: between(1, 1000, { integer: true }),
    // Notification lists name collaborators only.
    trainJobNotificationUids: fc.subarray([ids.userId, ids.otherUserId]),
    dspJobNotificationUids: fc.subarray([ids.userId, ids.otherUserId]),
    lastDeployModelEngine: fc.constantFrom(...MODEL_ENGINES),
    lastDeploymentTarget: line(1024, true),
    experiments: fc.array(line(128), { maxLength: 3 }),
    gettingStartedStep: between(0, 100, { integer: true }),
    gettingStartedClasses: fc.array(line(128, true), { maxLength: 3 }),
    enabledModelProfilingVariants: fc.subarray([...MODEL_VARIANTS]),
    anomalyLabelsConfig: fc.record({ anomalyLabels: fc.array(line(256), { maxLength: 2 }), noAnomalyLabels: fc.array(line(256), { maxLength: 2 }) }),
    datasetSplitOptions: fc.record({ trainingSplitRatio: between(0, 1), testingSplitRatio: between(0, 1), stratifyBy: fc.record({ label: fc.boolean(), metadataKeys: fc.array(line(128), { maxLength: 2 }) }, { requiredKeys: [] }) }, { requiredKeys: ['trainingSplitRatio', 'testingSplitRatio'] }),
    defaultImpulseId: fc.option(uid, { nil: null }),
    tags: fc.array(line(64), { maxLength: 5 }),
    targetConstraints: fc.record({
      targetDevices: fc.array(fc.record({ name: line(256, true), processors: fc.array(fc.record({ part: line(256, true), fpu: fc.boolean(), clockRateMhz: range, memory }, { requiredKeys: [] }), { maxLength: 2 }) }, { requiredKeys: [] }), { maxLength: 2 }),
      applicationBudgets: fc.array(fc.record({ latencyPerInferenceMs: range, memoryOverhead: memory }, { requiredKeys: [] }), { maxLength: 2 }),
    }),
    performance: fc.record({ useGpu: fc.boolean(), computeTimeLimitM: between(0, 1_000_000, { integer: true }), dspFileSizeMb: between(1, 100_000, { integer: true }), trainJobRamMb: between(256, 1_000_000, { integer: true }) }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
).filter((change) => Object.keys(change).length > 0);

function blocks(): fc.Arbitrary<ImpulseBlocks> {
  const blockId = fc.integer({ min: 1, max: 2 ** 31 - 1 });
  const inputBlock = fc.record({
    id: blockId,
    type: fc.constantFrom(...INPUT_BLOCK_TYPES),
    name: line(256),
    title: line(256),
    axes: fc.array(line(128), { maxLength: 3 }),
    windowSizeMs: between(1, MAX_INTERVAL_MS),
    windowIncreaseMs: between(1, MAX_INTERVAL_MS),
    frequencyHz: between(1000 / MAX_INTERVAL_MS, 1000 / MIN_INTERVAL_MS),
    imageWidth: between(1, MAX_PIXEL_SIDE, { integer: true }),
    imageHeight: between(1, MAX_PIXEL_SIDE, { integer: true }),
    createdAt: iso,
  }, { requiredKeys: ['id', 'type', 'name', 'title', 'createdAt'] });
  const dspBlock = fc.record({ id: blockId, type: line(64), name: line(256), axes: fc.array(line(128), { maxLength: 3 }), title: line(256), input: blockId, implementationVersion: between(1, 100, { integer: true }), createdAt: iso });
  const learnBlock = fc.record({ id: blockId, type: fc.constantFrom(...LEARN_BLOCK_TYPES), name: line(256), dsp: fc.array(blockId, { maxLength: 3 }), title: line(256), createdAt: iso });
  const postBlock = fc.record({ id: blockId, type: line(64), name: line(256), title: line(256), implementationVersion: between(1, 100, { integer: true }), createdAt: iso });
  return fc.record({
    inputBlocks: fc.array(inputBlock, { maxLength: 2 }),
    dspBlocks: fc.array(dspBlock, { maxLength: 2 }),
    learnBlocks: fc.array(learnBlock, { maxLength: 2 }),
    postProcessingBlocks: fc.array(postBlock, { maxLength: 1 }),
  });
}

const boundingBox = fc.record({ label: line(256), x: between(0, MAX_PIXEL_SIDE), y: between(0, MAX_PIXEL_SIDE), width: between(0, MAX_PIXEL_SIDE), height: between(0, MAX_PIXEL_SIDE) });

function sampleIngested(ids: Ids): fc.Arbitrary<DataOf<'SampleIngested'>> {
  return fc
    .record({
      category: fc.constantFrom(...INGESTION_CATEGORIES, 'validation' as const, 'post-processing' as const),
      fileName: line(256),
      label: fc.option(line(256, true), { nil: null }),
      sha256: hash,
      size: between(0, 100 * 1024 * 1024, { integer: true }),
      contentType: line(256),
      kind: fc.constantFrom('time-series' as const, 'audio' as const, 'image' as const, 'video' as const),
      intervalMs: between(MIN_INTERVAL_MS, MAX_INTERVAL_MS),
      sensors: fc.array(fc.record({ name: line(256), units: line(64, true) }), { maxLength: 3 }),
      valuesCount: between(0, MAX_VALUE_ROWS, { integer: true }),
      totalLengthMs: between(0, MAX_SAMPLE_LENGTH_MS),
      // From a small pool shared with the devices registered through the API.
      deviceName: fc.option(fc.oneof(fc.constant(ids.deviceId), line(MAX_DEVICE_TEXT_LENGTH)), { nil: null }),
      deviceType: fc.option(line(MAX_DEVICE_TEXT_LENGTH), { nil: null }),
      width: fc.option(between(0, MAX_PIXEL_SIDE, { integer: true }), { nil: null }),
      height: fc.option(between(0, MAX_PIXEL_SIDE, { integer: true }), { nil: null }),
      signatureMethod: fc.constantFrom('HS256' as const, 'none' as const, null),
      signatureValidate: fc.boolean(),
      signatureKeyId: fc.option(uid, { nil: null }),
      metadata: fc.dictionary(line(128), line(1024, true), { maxKeys: 4 }),
      boundingBoxes: fc.array(boundingBox, { maxLength: 3 }),
      structuredLabels: fc.array(fc.record({ label: line(256), startIndex: between(0, MAX_VALUE_ROWS, { integer: true }), endIndex: between(0, MAX_VALUE_ROWS, { integer: true }) }), { maxLength: 3 }),
      uploadSource: fc.option(line(256), { nil: null }),
      ingested: iso,
    })
    .map((d) => ({ ...d, sampleId: ids.id, projectId: ids.projectId, frequency: 1000 / d.intervalMs }));
}

// A stored space: DSP parameter names are checked against a block's parameters, so they are plain
// (letters, digits, dashes); values any accepted text.
const tunerSpace: fc.Arbitrary<TunerSpaceImpulse> = fc.record({
  inputBlocks: fc.array(fc.record({ type: fc.constant('time-series' as const), windows: fc.array(between(1, 86_400_000, { integer: true }).chain((size) => fc.record({ windowSizeMs: fc.constant(size), windowIncreaseMs: between(1, size, { integer: true }) })), { minLength: 1, maxLength: 3 }) }), { minLength: 1, maxLength: 2 }),
  dspBlocks: fc.array(fc.record({ type: fc.constantFrom('spectral-analysis', 'raw', 'mfe'), parameters: fc.array(fc.record({ name: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), values: fc.array(line(64, true), { minLength: 1, maxLength: 3 }) }), { maxLength: 3 }) }), { minLength: 1, maxLength: 2 }),
  learnBlocks: fc.array(fc.record({ blocks: fc.array(fc.record({
    type: fc.constantFrom('keras' as const, 'keras-regression' as const),
    denseStacks: fc.array(fc.record({ neurons: fc.array(between(1, 4096, { integer: true }), { maxLength: 8 }) }), { minLength: 1, maxLength: 3 }),
    learningRates: fc.array(between(1e-7, 10), { minLength: 1, maxLength: 3 }),
    trainingCycles: fc.array(between(1, 10_000, { integer: true }), { minLength: 1, maxLength: 3 }),
    batchSizes: fc.array(between(1, 65_536, { integer: true }), { minLength: 1, maxLength: 3 }),
  }), { minLength: 1, maxLength: 1 }) }), { minLength: 1, maxLength: 2 }),
});

const optimizeSettings: fc.Arbitrary<OptimizeSettings> = fc.record({
  name: fc.option(line(256), { nil: null }),
  targetDevice: fc.record({ name: fc.constantFrom('cortex-m4f-80mhz', 'cortex-m7-216mhz', 'raspberry-pi-4'), ram: between(OPTIMIZE_LIMITS.memory.min, OPTIMIZE_LIMITS.memory.max, { integer: true }), rom: between(OPTIMIZE_LIMITS.memory.min, OPTIMIZE_LIMITS.memory.max, { integer: true }) }),
  targetLatency: between(OPTIMIZE_LIMITS.targetLatency.min, OPTIMIZE_LIMITS.targetLatency.max),
  tuningMaxTrials: between(1, OPTIMIZE_LIMITS.tuningMaxTrials.max, { integer: true }),
  tuningWorkers: between(1, OPTIMIZE_LIMITS.tuningWorkers.max, { integer: true }),
  trainingCycles: between(1, OPTIMIZE_LIMITS.trainingCycles.max, { integer: true }),
  tuningAlgorithm: fc.constantFrom(...TUNING_ALGORITHMS),
  space: fc.array(tunerSpace, { maxLength: 2 }),
});

const trialImpulse: fc.Arbitrary<TrialImpulse> = fc.record({
  window: between(1, 86_400_000, { integer: true }).chain((size) => fc.record({ windowSizeMs: fc.constant(size), windowIncreaseMs: between(1, size, { integer: true }) })),
  dsp: fc.record({ type: fc.constantFrom('spectral-analysis', 'mfe'), config: fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_-]{0,20}$/), line(64, true), { maxKeys: 3 }) }),
  learn: fc.record({ type: fc.constantFrom('keras' as const, 'keras-regression' as const), denseLayers: fc.array(between(1, 4096, { integer: true }), { maxLength: 8 }), learningRate: between(1e-7, 10), trainingCycles: between(1, 10_000, { integer: true }), batchSize: between(1, 65_536, { integer: true }) }),
});
// Mostly the same two sockets, so a disconnect often ends the current connection.
const connectionId = fc.oneof({ weight: 3, arbitrary: fc.constantFrom('c1', 'c2') }, { weight: 1, arbitrary: line(128) });
const remoteSensor = fc.record({ name: line(128), maxSampleLengthS: between(0, 1e7), frequencies: fc.array(between(1e-3, 1e6), { maxLength: 3 }) });
const tunerRun = (ids: Ids) => ({ projectId: fc.constant(ids.projectId), coordinatorJobId: fc.constant(ids.id) });
const trialNumber = between(0, 999, { integer: true });
const errorText = fc.option(text({ max: 4096, multiline: true, allowEmpty: true }).filter((t) => t.trim() !== ''), { nil: null });

function whitelabelSettings(ids: Ids): fc.Arbitrary<WhitelabelSettings>;
function whitelabelSettings(ids: Ids, requiredKeys: []): fc.Arbitrary<Partial<WhitelabelSettings>>;
function whitelabelSettings(ids: Ids, requiredKeys?: []): fc.Arbitrary<Partial<WhitelabelSettings>> {
  const domain = fc.constantFrom('studio.example.com', 'ml.acme.test', 'a-b.c0.example');
  return fc.record(
    {
      name: line(128),
      domain,
      ownerOrganizationId: fc.constant(ids.organizationId),
      identityProviders: fc.array(line(64), { maxLength: 2 }),
      allowPasswordAuth: fc.boolean(),
      deploymentTargets: fc.subarray([...DEPLOYMENT_TARGET_FORMATS]),
      learningBlocks: fc.subarray([...LEARN_BLOCK_TYPES]),
      allowSignup: fc.boolean(),
      allowFreeProjects: fc.boolean(),
      exposePublicProjects: fc.boolean(),
      organizationsLimit: fc.option(fc.nat(), { nil: null }),
      disablePublicEntities: fc.boolean(),
      requireCollaboratorsInWhitelabel: fc.boolean(),
      disableMarketingFeatures: fc.boolean(),
      disableForumAccess: fc.boolean(),
    },
    requiredKeys ? { requiredKeys } : {},
  );
}

type Generators = { [K in EventType]: (ids: Ids) => fc.Arbitrary<DataOf<K>> };

export const eventGenerators: Generators = {
  // user-{id} (and logins-{id})
  UserRegistered: (ids) =>
    fc.record({
      userId: fc.constant(ids.userId),
      username: line(128),
      name: sealed(line(256)),
      email: sealed(line(254)),
      jobTitle: fc.option(line(256, true), { nil: null }),
      companyName: fc.option(line(256, true), { nil: null }),
      passwordHash: fc.option(line(256), { nil: null }),
      firstUser: fc.boolean(),
      pending: fc.boolean(),
      thirdPartyCodeHash: fc.option(hash, { nil: null }),
      registered: iso,
    }),
  ActivationCodeIssued: (ids) => fc.record({ userId: fc.constant(ids.userId), codeHash: hash, expires: iso, issued: iso }),
  UserActivated: (ids) => fc.record({ userId: fc.constant(ids.userId), via: fc.constantFrom('code' as const, 'third-party-code' as const), username: opt(line(128)), name: opt(sealed(line(256))), activated: iso }, { requiredKeys: ['userId', 'via', 'activated'] }),
  PasswordResetRequested: (ids) => fc.record({ userId: fc.constant(ids.userId), codeHash: hash, expires: iso, requested: iso }),
  PasswordChanged: (ids) => fc.record({ userId: fc.constant(ids.userId), passwordHash: line(256), via: fc.constantFrom('change' as const, 'reset' as const, 'sso' as const, 'third-party-activation' as const), sessionVersion: between(0, 2 ** 31, { integer: true }), changed: iso }),
  TotpKeyCreated: (ids) => fc.record({ userId: fc.constant(ids.userId), key: sealed(line(128)), created: iso }),
  TotpEnabled: (ids) => fc.record({ userId: fc.constant(ids.userId), recoveryCodeHashes: fc.array(hash, { maxLength: 10 }), timeStep: between(0, 2 ** 40, { integer: true }), enabled: iso }),
  TotpCleared: (ids) => fc.record({ userId: fc.constant(ids.userId), cleared: iso }),
  LoginSucceeded: (ids) => fc.record({ userId: fc.constant(ids.userId), method: fc.constantFrom('password' as const, 'totp' as const, 'recovery-code' as const), totpTimeStep: fc.option(between(0, 2 ** 40, { integer: true }), { nil: null }), recoveryCodeHash: fc.option(hash, { nil: null }), address: sealed(line(64)), at: iso }),
  LoginFailed: (ids) => fc.record({ userId: fc.constant(ids.userId), reason: fc.constantFrom('wrong-password' as const, 'totp-required' as const, 'wrong-totp' as const), address: sealed(line(64)), at: iso }),
  UserProfileUpdated: (ids) =>
    fc
      .record(
        {
          name: sealed(line(256)),
          jobTitle: sealed(line(256, true)),
          companyName: sealed(line(256, true)),
          experiments: fc.subarray(USER_EXPERIMENTS.map((e) => e.type) as string[]),
          projectsSortOrder: fc.constantFrom(...PROJECTS_SORT_ORDERS),
          timezone: line(64),
        },
        { requiredKeys: [] },
      )
      .chain((changes) => iso.map((updated) => ({ userId: ids.userId, ...changes, updated }))),
  TermsOfServiceAccepted: (ids) => fc.record({ userId: fc.constant(ids.userId), version: line(64), accepted: iso }),
  EulaAccepted: (ids) => fc.record({ userId: fc.constant(ids.userId), name: fc.constantFrom(...EULAS.map((e) => e.name)), version: line(64), accepted: iso }),
  NotificationDismissed: (ids) => fc.record({ userId: fc.constant(ids.userId), notification: fc.constantFrom(...USER_NOTIFICATIONS), dismissed: iso }),
  UserPhotoChanged: (ids) => fc.record({ userId: fc.constant(ids.userId), photo: fc.option(hash, { nil: null }), changed: iso }),
  DeveloperProfileCreated: (ids) => fc.record({ userId: fc.constant(ids.userId), organizationId: fc.constant(ids.organizationId), created: iso }),
  EnterpriseTrialStarted: (ids) => fc.record({ userId: fc.constant(ids.userId), trialId: fc.constant(ids.id), organizationId: fc.constant(ids.organizationId), expirationDate: iso, notes: fc.option(paragraph(1024), { nil: null }), created: iso }),
  SubscriptionCheckoutStarted: (ids) => fc.record({ userId: fc.constant(ids.userId), checkoutId: line(256), started: iso }),
  SubscriptionActivated: (ids) => fc.record({ userId: fc.constant(ids.userId), checkoutId: line(256), tier: fc.constant('professional' as const), periodStart: iso, periodEnd: iso }),
  SubscriptionCancellationRequested: (ids) => fc.record({ userId: fc.constant(ids.userId), reason: fc.option(paragraph(1024), { nil: null }), requested: iso, effective: iso }),
  SubscriptionCancellationUndone: (ids) => fc.record({ userId: fc.constant(ids.userId), undone: iso }),
  SubscriptionCanceled: (ids) => fc.record({ userId: fc.constant(ids.userId), canceled: iso }),
  UserDeleted: (ids) => fc.record({ userId: fc.constant(ids.userId), deleted: iso }),

  // organization-{id}
  OrganizationCreated: (ids) => fc.record({ organizationId: fc.constant(ids.organizationId), name: line(128), isDeveloperProfile: fc.boolean(), ownerUserId: fc.constant(ids.userId), trialId: fc.option(uid, { nil: null }), created: iso }),
  OrganizationUpdated: (ids) =>
    fc.record(
      { organizationId: fc.constant(ids.organizationId), changes: fc.record({ name: line(128), readme: paragraph(2000), showHeaderImgMask: fc.boolean(), experiments: fc.array(line(64), { maxLength: 3 }) }, { requiredKeys: [] }), updated: iso },
    ),
  OrganizationDeleted: (ids) => fc.record({ organizationId: fc.constant(ids.organizationId), deletedDate: iso }),
  OrganizationMemberAdded: (ids) =>
    fc.record({
      organizationId: fc.constant(ids.organizationId),
      userId: fc.constant(ids.otherUserId),
      role: fc.constantFrom(...ORGANIZATION_MEMBER_ROLES),
      datasets: fc.array(line(128), { maxLength: 3 }),
      invited: fc.boolean(),
      addedByUserId: fc.option(fc.constant(ids.userId), { nil: null }),
      added: iso,
    }),
  OrganizationMemberRemoved: (ids) => fc.record({ organizationId: fc.constant(ids.organizationId), userId: fc.constant(ids.otherUserId), removed: iso }),
  OrganizationMemberRoleSet: (ids) => fc.record({ organizationId: fc.constant(ids.organizationId), userId: fc.constantFrom(ids.userId, ids.otherUserId), role: fc.constantFrom(...ORGANIZATION_MEMBER_ROLES), updated: iso }),
  OrganizationMemberDatasetsSet: (ids) => fc.record({ organizationId: fc.constant(ids.organizationId), userId: fc.constantFrom(ids.userId, ids.otherUserId), datasets: fc.array(line(128), { maxLength: 3 }), updated: iso }),
  // The invitee is the other user, or a user id no account has (a name no account had when typed).
  OrganizationMemberInvited: (ids) =>
    fc.record({
      organizationId: fc.constant(ids.organizationId),
      invitationId: fc.constantFrom(ids.id, ids.id + 1),
      userId: fc.constantFrom(ids.otherUserId, 9999),
      invitedAs: sealed(line(256)),
      role: fc.constantFrom(...ORGANIZATION_MEMBER_ROLES),
      datasets: fc.array(line(128), { maxLength: 3 }),
      invitedByUserId: fc.constant(ids.userId),
      acceptedOnActivation: fc.boolean(),
      invited: iso,
    }),
  OrganizationMemberInvitationAccepted: (ids) => fc.record({ organizationId: fc.constant(ids.organizationId), invitationId: fc.constantFrom(ids.id, ids.id + 1), userId: fc.constant(ids.otherUserId), accepted: iso }),
  OrganizationMemberInvitationDeclined: (ids) => fc.record({ organizationId: fc.constant(ids.organizationId), invitationId: fc.constantFrom(ids.id, ids.id + 1), userId: fc.constant(ids.otherUserId), declined: iso }),
  OrganizationMemberInvitationWithdrawn: (ids) =>
    fc.record({ organizationId: fc.constant(ids.organizationId), invitationId: fc.constantFrom(ids.id, ids.id + 1), userId: fc.constantFrom(ids.otherUserId, 9999), withdrawnByUserId: fc.constantFrom(ids.userId, null), withdrawn: iso }),
  OrganizationApiKeyAdded: (ids) =>
    fc.record({
      organizationId: fc.constant(ids.organizationId),
      apiKeyId: fc.constant(ids.id),
      name: line(256),
      role: fc.constantFrom(...ORGANIZATION_API_KEY_ROLES),
      // The key's hash is its document's _id: one per key id.
      keyHash: fc.constant(`org${ids.id.toString(16).padStart(61, '0')}`),
      keyHint: fc.constant('ei_0123456'),
      createdByUserId: fc.option(fc.constant(ids.userId), { nil: null }),
      expires: fc.option(iso, { nil: null }),
      created: iso,
    }),
  OrganizationApiKeyRevoked: (ids) => fc.record({ organizationId: fc.constant(ids.organizationId), apiKeyId: fc.constant(ids.id), revoked: iso }),

  // whitelabel-{id} (the organization's id stands for the white label's)
  WhitelabelCreated: (ids) => fc.record({ whitelabelId: fc.constant(ids.organizationId), settings: whitelabelSettings(ids), created: iso }),
  WhitelabelUpdated: (ids) => fc.record({ whitelabelId: fc.constant(ids.organizationId), changes: whitelabelSettings(ids, []), updated: iso }),
  WhitelabelDeleted: (ids) => fc.record({ whitelabelId: fc.constant(ids.organizationId), deletedDate: iso }),

  // oauth-client-{clientId} (the stream's id number stands for the random client id)
  OAuthClientRegistered: (ids) =>
    fc.record({
      clientId: fc.constant(`client${ids.id.toString(16).padStart(16, '0')}`),
      ownerUserId: fc.constant(ids.userId),
      name: line(256),
      redirectUris: fc.array(fc.constantFrom('https://app.example.com/cb', 'http://localhost:3000/cb', 'http://[::1]/cb?x=1'), { minLength: 1, maxLength: 3 }),
      secretHash: fc.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      registered: iso,
    }),
  // oauth-{kind}-{hash of the id}: what oidc-provider persists; no projection reads it yet.
  OAuthArtifactSaved: () =>
    fc.record({
      kind: fc.constantFrom(...OAUTH_ARTIFACT_KINDS),
      payload: fc.dictionary(fc.constantFrom('accountId', 'clientId', 'grantId', 'scope', 'uid', 'params'), fc.oneof(line(64), between(0, 2 ** 31, { integer: true })), { maxKeys: 4 }),
      expires: iso,
    }),
  OAuthArtifactConsumed: () => fc.record({ kind: fc.constantFrom(...OAUTH_ARTIFACT_KINDS), consumed: iso }),
  OAuthArtifactEnded: () =>
    fc.record(
      { kind: fc.constantFrom(...OAUTH_ARTIFACT_KINDS), reason: fc.constantFrom('destroyed' as const, 'revoked' as const), cause: fc.constantFrom(...OAUTH_GRANT_END_CAUSES), ended: iso },
      { requiredKeys: ['kind', 'reason', 'ended'] },
    ),
  OAuthClientDeleted: (ids) => fc.record({ clientId: fc.constant(`client${ids.id.toString(16).padStart(16, '0')}`), ownerUserId: fc.constant(ids.userId), deleted: iso }),

  // project-{id}
  ProjectCreated: (ids) =>
    fc.record(
      { projectId: fc.constant(ids.projectId), name: line(PROJECT_NAME_MAX), description: paragraph(10_000), ownerUserId: fc.constant(ids.userId), isPublic: fc.boolean(), created: iso, whitelabelId: fc.constantFrom(ids.id, 1), ownerOrganizationId: fc.constant(ids.organizationId) },
      { requiredKeys: ['projectId', 'name', 'description', 'ownerUserId', 'isPublic', 'created'] },
    ),
  CollaboratorAdded: (ids) => fc.record({ projectId: fc.constant(ids.projectId), userId: fc.constantFrom(ids.userId, ids.otherUserId), isOwner: fc.boolean(), added: iso }),
  CollaboratorRemoved: (ids) => fc.record({ projectId: fc.constant(ids.projectId), userId: fc.constantFrom(ids.userId, ids.otherUserId), removed: iso }),
  CollaboratorInvited: (ids) => fc.record({ projectId: fc.constant(ids.projectId), invitationId: fc.constant(ids.id), userId: fc.constantFrom(ids.otherUserId, null), invitedAs: sealed(line(256)), invitedByUserId: fc.constant(ids.userId), invited: iso }),
  CollaboratorInvitationAccepted: (ids) => fc.record({ projectId: fc.constant(ids.projectId), invitationId: fc.constant(ids.id), userId: fc.constant(ids.otherUserId), accepted: iso }),
  CollaboratorInvitationDeclined: (ids) => fc.record({ projectId: fc.constant(ids.projectId), invitationId: fc.constant(ids.id), userId: fc.constant(ids.otherUserId), declined: iso }),
  CollaboratorInvitationWithdrawn: (ids) => fc.record({ projectId: fc.constant(ids.projectId), invitationId: fc.constant(ids.id), userId: fc.constantFrom(ids.otherUserId, null), withdrawnByUserId: fc.constantFrom(ids.userId, null), withdrawn: iso }),
  ApiKeyAdded: (ids) =>
    fc.record({
      projectId: fc.constant(ids.projectId),
      apiKeyId: fc.constant(ids.id),
      name: line(128),
      role: fc.constantFrom(...API_KEY_ROLES),
      // The key's hash is its document's _id: one per key id.
      keyHash: fc.constant(ids.id.toString(16).padStart(64, '0')),
      keyHint: line(16),
      isDevelopmentKey: fc.boolean(),
      apiKey: sealed(line(256)),
      createdByUserId: fc.option(fc.constant(ids.userId), { nil: null }),
      created: iso,
      expires: fc.option(iso, { nil: null }),
    }),
  ApiKeyRevoked: (ids) => fc.record({ projectId: fc.constant(ids.projectId), apiKeyId: fc.constant(ids.id), revoked: iso }),
  HmacKeyAdded: (ids) => fc.record({ projectId: fc.constant(ids.projectId), hmacKeyId: fc.constant(ids.id), name: line(128), hmacKey: sealed(line(256)), isDevelopmentKey: fc.boolean(), createdByUserId: fc.option(fc.constant(ids.userId), { nil: null }), created: iso }),
  HmacKeyRevoked: (ids) => fc.record({ projectId: fc.constant(ids.projectId), hmacKeyId: fc.constant(ids.id), revoked: iso }),
  ProjectUpdated: (ids) =>
    fc.record({
      projectId: fc.constant(ids.projectId),
      changes: settingsChange(ids),
      updated: iso,
    }),
  ProjectDeleted: (ids) => fc.record({ projectId: fc.constant(ids.projectId), deletedDate: iso, scheduledFullDeletionDate: iso }),
  ProjectFullyDeleted: (ids) => fc.record({ projectId: fc.constant(ids.projectId), fullDeletionDate: iso, quarantinedBlobs: fc.array(hash, { maxLength: 3 }) }),
  ProjectBlobsPurged: (ids) => fc.record({ projectId: fc.constant(ids.projectId), purged: fc.array(hash, { maxLength: 3 }), restored: fc.array(hash, { maxLength: 3 }), purgedDate: iso }),
  ApiKeyUsed: (ids) => fc.record({ projectId: fc.constant(ids.projectId), apiKeyId: fc.constant(ids.id), date: iso }),

  // sample-{id}
  SampleIngested: sampleIngested,
  SampleDeleted: (ids) => fc.record({ sampleId: fc.constant(ids.id), projectId: fc.constant(ids.projectId), deleted: iso }),

  // device-{projectId}-{deviceId}
  DeviceCreated: (ids) => fc.record({ projectId: fc.constant(ids.projectId), deviceId: fc.constant(ids.deviceId), id: fc.constant(ids.id), deviceType: line(64), name: line(128), created: iso }),
  DeviceRenamed: (ids) => fc.record({ projectId: fc.constant(ids.projectId), deviceId: fc.constant(ids.deviceId), name: line(128) }),
  DeviceDeleted: (ids) => fc.record({ projectId: fc.constant(ids.projectId), deviceId: fc.constant(ids.deviceId), deleted: iso }),
  DeviceConnected: (ids) =>
    fc.record(
      {
        projectId: fc.constant(ids.projectId),
        deviceId: fc.constant(ids.deviceId),
        id: fc.constant(ids.id),
        deviceType: line(64),
        connectionId: connectionId,
        host: line(64),
        mode: fc.constantFrom('ingestion' as const, 'inference' as const),
        sensors: fc.array(remoteSensor, { maxLength: 3 }),
        supportsSnapshotStreaming: fc.boolean(),
        inferenceInfo: fc.record(
          {
            projectId: uid,
            projectOwner: line(64, true),
            projectName: line(64, true),
            deployedVersion: between(0, 1e6, { integer: true }),
            modelType: fc.constantFrom('classification' as const, 'objectDetection' as const, 'constrainedObjectDetection' as const, 'freeform' as const),
          },
          { requiredKeys: ['projectId', 'projectOwner', 'projectName', 'deployedVersion'] },
        ),
        connected: iso,
      },
      { requiredKeys: ['projectId', 'deviceId', 'id', 'deviceType', 'connectionId', 'host', 'mode', 'sensors', 'supportsSnapshotStreaming', 'connected'] },
    ),
  DeviceDisconnected: (ids) =>
    fc.record({
      projectId: fc.constant(ids.projectId),
      deviceId: fc.constant(ids.deviceId),
      connectionId: connectionId,
      reason: fc.constantFrom('closed' as const, 'timeout' as const, 'replaced' as const, 'server-stopped' as const, 'protocol-error' as const, 'access-ended' as const),
      disconnected: iso,
    }),
  DeviceSamplingRequested: (ids) =>
    fc.record(
      {
        projectId: fc.constant(ids.projectId),
        deviceId: fc.constant(ids.deviceId),
        requestId: uid,
        connectionId: connectionId,
        label: line(256),
        lengthMs: between(1, 86_400_000),
        category: fc.constantFrom('training' as const, 'testing' as const),
        intervalMs: between(1e-6, 86_400_000),
        sensor: line(128),
        requested: iso,
      },
      { requiredKeys: ['projectId', 'deviceId', 'requestId', 'connectionId', 'label', 'lengthMs', 'category', 'intervalMs', 'requested'] },
    ),
  DeviceSamplingProgressed: (ids) =>
    fc.record(
      {
        projectId: fc.constant(ids.projectId),
        deviceId: fc.constant(ids.deviceId),
        requestId: uid,
        connectionId: connectionId,
        stage: fc.constantFrom(...SAMPLING_STAGES),
        progressPercentage: between(0, 100),
        error: line(1024),
        at: iso,
      },
      { requiredKeys: ['projectId', 'deviceId', 'requestId', 'connectionId', 'stage', 'at'] },
    ),

  // email-{id}
  // audit-log
  LogCheckpointRecorded: () =>
    fc.record({ throughPosition: fc.bigInt({ min: 1n, max: 2n ** 64n }).map(String), logHash: hash, events: between(1, Number.MAX_SAFE_INTEGER, { integer: true }), recorded: iso }),
  JobRequested: (ids) =>
    fc.record({
      jobId: fc.constant(ids.id),
      projectId: fc.constantFrom(ids.projectId, null),
      organizationId: fc.constantFrom(ids.organizationId, null),
      category: line(128),
      categoryKey: line(128),
      key: line(128, true),
      parameters: fc.dictionary(line(64), fc.oneof(fc.integer(), fc.boolean(), line(64, true))),
      jobNotificationUids: fc.array(fc.constantFrom(ids.userId, ids.otherUserId), { maxLength: 3 }),
      createdByUserId: fc.constantFrom(ids.userId, null),
      // Absent in jobs recorded before parents existed, and in root jobs.
      parentJobId: fc.option(fc.constantFrom(ids.id + 1, ids.id + 2), { nil: undefined }),
      created: iso,
    }),
  JobStarted: (ids) => fc.record({ jobId: fc.constant(ids.id), workerId: line(128), attempt: between(1, 10, { integer: true }), started: iso }),
  JobOutputWritten: (ids) =>
    fc.record({ jobId: fc.constant(ids.id), lines: fc.array(fc.record({ created: iso, data: paragraph(4096), logLevel: fc.constantFrom(...JOB_LOG_LEVELS) }), { minLength: 1, maxLength: 5 }) }),
  JobCancelRequested: (ids) => fc.record({ jobId: fc.constant(ids.id), force: fc.boolean(), requestedByUserId: fc.constantFrom(ids.userId, null), requested: iso }),
  JobFinished: (ids) =>
    fc.record({ jobId: fc.constant(ids.id), finishedSuccessful: fc.boolean(), reason: fc.option(line(1024), { nil: null }), cancelled: fc.boolean(), computeTimeMs: between(0, 1e12, { integer: true }), finished: iso }),
  JobHeartbeat: (ids) => fc.record({ jobId: fc.constant(ids.id), workerId: line(128), attempt: between(1, 10, { integer: true }), at: iso }),
  JobNotificationsUpdated: (ids) => fc.record({ jobId: fc.constant(ids.id), jobNotificationUids: fc.uniqueArray(between(1, Number.MAX_SAFE_INTEGER, { integer: true }), { maxLength: 5 }) }),
  JobNotificationsPlanned: (ids) =>
    fc.record({ jobId: fc.constant(ids.id), notifications: fc.array(fc.record({ userId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }), emailId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }) }), { maxLength: 3 }) }),
  // dsp-features-{projectId}-{dspId}
  DspFeaturesGenerated: (ids) =>
    fc.tuple(between(0, 6, { integer: true }), fc.boolean(), between(0, 1e6, { integer: true }), between(0, 1e6, { integer: true })).chain(([featureCount, scaled, training, testing]) =>
      fc.record({
        projectId: fc.constant(ids.projectId),
        impulseId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }),
        dspId: fc.constant(ids.id),
        jobId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }),
        parameters: fc.record({ dspId: fc.constant(ids.id), calculateFeatureImportance: fc.boolean(), skipFeatureExplorer: fc.boolean(), normalizeData: fc.constantFrom(...NORMALIZE_DATA) }),
        dspConfig: fc.dictionary(line(64), line(1024, true), { maxKeys: 4 }),
        implementationVersion: between(1, 1000, { integer: true }),
        categories: fc.record({
          // raw is absent from results recorded before the job stored raw windows.
          training: fc.record({ x: hash, y: hash, raw: hash, windowCount: fc.constant(training) }, { requiredKeys: ['x', 'y', 'windowCount'] }),
          testing: fc.record({ x: hash, y: hash, raw: hash, windowCount: fc.constant(testing) }, { requiredKeys: ['x', 'y', 'windowCount'] }),
        }),
        metadata: hash,
        explorer: fc.option(hash, { nil: null }),
        importance: fc.option(hash, { nil: null }),
        featureCount: fc.constant(featureCount),
        windowCount: fc.constant(training + testing),
        classes: fc.array(line(256, true), { maxLength: 4 }),
        skippedSampleIds: fc.array(between(1, Number.MAX_SAFE_INTEGER, { integer: true }), { maxLength: 3 }),
        sourcePosition: line(64),
        scaler: scaled
          ? fc.record({ mean: fc.array(between(-3.4e38, 3.4e38), { minLength: featureCount, maxLength: featureCount }), scale: fc.array(between(-3.4e38, 3.4e38), { minLength: featureCount, maxLength: featureCount }) })
          : fc.constant(null),
        impulseFingerprint: hash,
        generated: iso,
      }, { requiredKeys: ['projectId', 'impulseId', 'dspId', 'jobId', 'parameters', 'dspConfig', 'implementationVersion', 'categories', 'metadata', 'explorer', 'importance', 'featureCount', 'windowCount', 'classes', 'skippedSampleIds', 'sourcePosition', 'scaler', 'generated'] }),
    ),
  // anomaly-{projectId}-{learnId}
  AnomalySettingsChanged: (ids) =>
    fc.record({
      projectId: fc.constant(ids.projectId),
      learnId: fc.constant(ids.id),
      axes: fc.uniqueArray(between(0, 10_000_000, { integer: true }), { minLength: 1, maxLength: 5 }),
      clusterCount: between(1, 1000, { integer: true }),
      minimumConfidenceRating: between(-1e6, 1e6),
      changed: iso,
    }, { requiredKeys: ['projectId', 'learnId', 'changed'] }),
  AnomalyModelTrained: (ids) =>
    between(1, 1000, { integer: true }).chain((clusterCount) =>
      fc.record({
        projectId: fc.constant(ids.projectId),
        learnId: fc.constant(ids.id),
        impulseId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }),
        jobId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }),
        model: hash,
        features: fc.array(fc.record({ dspId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }), x: hash, windowCount: between(1, 1e9, { integer: true }), featureCount: between(1, 10_000_000, { integer: true }), sourcePosition: line(1024), position: line(64) }, { requiredKeys: ['dspId', 'x', 'windowCount', 'featureCount', 'sourcePosition'] }), { minLength: 1, maxLength: 3 }),
        settings: fc.record({ axes: fc.uniqueArray(between(0, 10_000_000, { integer: true }), { minLength: 1, maxLength: 5 }), clusterCount: fc.constant(clusterCount), minimumConfidenceRating: between(-1e6, 1e6) }),
        seed: between(0, 2 ** 32 - 1, { integer: true }),
        clusterCount: between(1, clusterCount, { integer: true }),
        iterations: between(0, 1e9, { integer: true }),
        trained: iso,
      }),
    ),
  // keras-{projectId}-{learnId}
  KerasSettingsSet: (ids) => fc.record({ projectId: fc.constant(ids.projectId), learnId: fc.constant(ids.id), settings: kerasSettings, set: iso }),
  KerasModelTrained: (ids) =>
    fc.integer({ min: 2, max: 4 }).chain((classCount) =>
      fc.record({
        projectId: fc.constant(ids.projectId),
        learnId: fc.constant(ids.id),
        jobId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }),
        model: hash,
        seed: between(0, 2 ** 32 - 1, { integer: true }),
        settings: kerasSettings,
        features: fc.array(fc.record({ dspId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }), x: hash, y: hash, position: line(64), sourcePosition: line(64) }), { minLength: 1, maxLength: 2 }),
        classes: fc.array(line(256, true), { minLength: classCount, maxLength: classCount }),
        inputShape: fc.array(between(1, 1e9, { integer: true }), { minLength: 1, maxLength: 3 }),
        parameterCount: between(0, 1e9, { integer: true }),
        operations: between(0, 1e15, { integer: true }),
        trainingWindowCount: between(0, 1e9, { integer: true }),
        validation: fc.record({
          loss: fc.option(between(0, 3.4e38), { nil: null }),
          accuracy: fc.option(between(0, 1), { nil: null }),
          confusionMatrix: fc.array(fc.array(between(0, 1e9, { integer: true }), { minLength: classCount + 1, maxLength: classCount + 1 }), { minLength: classCount, maxLength: classCount }),
          report: fc.dictionary(line(256, true), fc.record({ precision: between(0, 1), recall: between(0, 1), 'f1-score': between(0, 1), support: between(0, 1e9, { integer: true }) }), { maxKeys: 3 }),
          windowCount: between(0, 1e9, { integer: true }),
          regression: fc.record({ meanSquaredError: fc.option(between(0, 3.4e38), { nil: null }), meanAbsoluteError: fc.option(between(0, 3.4e38), { nil: null }), explainedVariance: fc.option(between(-3.4e38, 1), { nil: null }) }),
        }, { requiredKeys: ['loss', 'accuracy', 'confusionMatrix', 'report', 'windowCount'] }),
        mode: fc.constant('regression' as const),
        trained: iso,
      }, { requiredKeys: ['projectId', 'learnId', 'jobId', 'model', 'seed', 'settings', 'features', 'classes', 'inputShape', 'parameterCount', 'operations', 'trainingWindowCount', 'validation', 'trained'] }),
    ),
  // optimize-config-{projectId}
  OptimizeConfigSet: (ids) => fc.record({ projectId: fc.constant(ids.projectId), config: optimizeSettings, set: iso }),
  // tuner-run-{projectId}-{coordinatorJobId}
  TunerRunStarted: (ids) =>
    fc.record({ ...tunerRun(ids), index: between(1, 1e9, { integer: true }), name: line(256), config: optimizeSettings, space: fc.array(tunerSpace, { maxLength: 2 }), seed: between(0, 2 ** 32 - 1, { integer: true }), extendedFromJobId: fc.option(between(1, Number.MAX_SAFE_INTEGER, { integer: true }), { nil: null }), started: iso }),
  TunerTrialPlanned: (ids) =>
    fc.record({ ...tunerRun(ids), trial: trialNumber, impulse: trialImpulse, round: fc.option(fc.record({ bracket: between(0, 100, { integer: true }), round: between(0, 100, { integer: true }), cycles: between(1, 10_000, { integer: true }) }), { nil: null }), planned: iso }),
  TunerTrialStarted: (ids) => fc.record({ ...tunerRun(ids), trial: trialNumber, jobId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }), attempt: between(1, 2, { integer: true }), started: iso }),
  TunerTrialFinished: (ids) =>
    fc.record({
      ...tunerRun(ids),
      trial: trialNumber,
      status: fc.constantFrom('completed' as const, 'failed' as const),
      accuracy: fc.option(between(0, 1), { nil: null }),
      loss: fc.option(between(0, 3.4e38), { nil: null }),
      estimates: fc.option(fc.record({ latencyMs: between(0, 1e12), ramBytes: between(0, 2 ** 53 - 1, { integer: true }), romBytes: between(0, 2 ** 53 - 1, { integer: true }) }), { nil: null }),
      overBudget: fc.boolean(),
      error: errorText,
      finished: iso,
      // Absent in events written before the model blob was recorded.
      modelSha256: fc.option(hash, { nil: null }),
    }, { requiredKeys: ['projectId', 'coordinatorJobId', 'trial', 'status', 'accuracy', 'loss', 'estimates', 'overBudget', 'error', 'finished'] }),
  TunerTrialEpoch: (ids) =>
    fc.record({
      ...tunerRun(ids),
      trial: trialNumber,
      epoch: between(1, 10_000, { integer: true }),
      loss: fc.option(between(0, 3.4e38), { nil: null }),
      accuracy: fc.option(between(0, 1), { nil: null }),
      valLoss: fc.option(between(0, 3.4e38), { nil: null }),
      valAccuracy: fc.option(between(0, 1), { nil: null }),
    }),
  TunerTrialImpulseAdded: (ids) => fc.record({ ...tunerRun(ids), trial: trialNumber, impulseId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }), jobId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }), added: iso }),
  TunerRunRenamed: (ids) => fc.record({ ...tunerRun(ids), name: line(256), renamed: iso }),
  TunerRunEnded: (ids) => fc.record({ ...tunerRun(ids), status: fc.constantFrom('completed' as const, 'failed' as const, 'cancelled' as const), error: errorText, ended: iso }),
  // deployment-{projectId}
  DeploymentBuilt: (ids) =>
    fc.record({
      projectId: fc.constant(ids.projectId),
      impulseId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }),
      jobId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }),
      version: between(1, Number.MAX_SAFE_INTEGER, { integer: true }),
      type: fc.constantFrom('runner-linux-x86_64', 'wasm'),
      engine: fc.constant('tflite'),
      artifact: hash,
      size: between(0, 2 ** 31, { integer: true }),
      fileName: line(256).filter((n) => !/[/\\"]/.test(n)),
      models: fc.array(fc.record({ learnId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }), type: fc.constantFrom('keras' as const, 'anomaly' as const), model: hash }), { minLength: 1, maxLength: 3 }),
      built: iso,
    }),
  // versions-{projectId}; the stream's version id is `ids.id`
  VersionCreated: (ids) => {
    const accuracy = fc.option(between(0, 1), { nil: null });
    return fc.record({
      projectId: fc.constant(ids.projectId),
      versionId: fc.constant(ids.id),
      number: between(1, Number.MAX_SAFE_INTEGER, { integer: true }),
      description: text(DESCRIPTION_RULE),
      position: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
      jobId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }),
      contents: fc.record({
        samples: fc.record({ count: between(0, Number.MAX_SAFE_INTEGER, { integer: true }), digest: hash, blobs: fc.array(hash, { maxLength: 3 }) }),
        impulses: hash,
        features: fc.array(hash, { maxLength: 3 }),
        models: fc.array(fc.record({ learnId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }), type: fc.constantFrom('keras' as const, 'anomaly' as const), model: hash, accuracy }), { maxLength: 2 }),
        trainingAccuracy: accuracy,
        testAccuracy: accuracy,
      }),
      createdByUserId: fc.option(fc.constant(ids.userId), { nil: null }),
      created: iso,
    });
  },
  VersionUpdated: (ids) => fc.record({ projectId: fc.constant(ids.projectId), versionId: fc.constant(ids.id), description: text(DESCRIPTION_RULE), updated: iso }),
  VersionDeleted: (ids) => fc.record({ projectId: fc.constant(ids.projectId), versionId: fc.constant(ids.id), deleted: iso }),
  // versions-{projectId} of a restore's target; no projection reads it (the history index does, as every event)
  VersionRestoreStarted: (ids) => {
    const pairs = fc.array(fc.tuple(uid, uid), { maxLength: 3 });
    return fc.record({
      projectId: fc.constant(ids.projectId),
      jobId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }),
      sourceProjectId: uid,
      versionId: fc.constant(ids.id),
      position: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
      sampleIds: pairs,
      impulseIds: pairs,
      blockIds: pairs,
      started: iso,
    });
  },
  // model-testing-{projectId}
  ModelTested: (ids) =>
    between(0, 1e9, { integer: true }).chain((windowCount) =>
      fc.record({
        projectId: fc.constant(ids.projectId),
        impulseId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }),
        jobId: between(1, Number.MAX_SAFE_INTEGER, { integer: true }),
        results: hash,
        summary: fc.record({
          sampleCount: between(0, 1e9, { integer: true }),
          skippedSampleCount: between(0, 1e9, { integer: true }),
          windowCount: fc.constant(windowCount),
          accuracy: windowCount === 0 ? fc.constant(null) : between(0, 1),
          balancedAccuracy: windowCount === 0 ? fc.constant(null) : between(0, 1),
        }),
        tested: iso,
      }),
    ),
  EmailQueued: (ids) =>
    fc.record({
      emailId: fc.constant(ids.id),
      userId: fc.option(fc.constant(ids.userId), { nil: null }),
      projectId: fc.option(fc.constant(ids.projectId), { nil: null }),
      from: line(254),
      to: sealed(line(254)),
      subject: line(500),
      bodyText: sealed(paragraph(100_000)),
      bodyHTML: sealed(paragraph(100_000)),
      queued: iso,
    }),
  EmailSent: (ids) => fc.record({ emailId: fc.constant(ids.id), providerResponse: paragraph(1024), sent: iso }),
  EmailNotSent: (ids) => fc.record({ emailId: fc.constant(ids.id), reason: paragraph(1024), at: iso }),

  // impulses-{projectId}
  ImpulseCreated: (ids) =>
    fc.tuple(fc.record({ name: line(128), type: fc.constantFrom(...IMPULSE_TYPES), created: iso }), blocks()).map(([d, b]) => ({ projectId: ids.projectId, impulseId: ids.id, ...d, ...b })),
  ImpulseBlocksReplaced: (ids) =>
    fc
      .tuple(fc.record({ name: line(128), type: fc.constantFrom(...IMPULSE_TYPES), clearedDspIds: fc.array(fc.integer({ min: 1, max: 2 ** 31 - 1 }), { maxLength: 3 }), replaced: iso }), blocks())
      .map(([d, b]) => ({ projectId: ids.projectId, impulseId: ids.id, ...d, ...b })),
  ImpulseUpdated: (ids) => fc.record({ projectId: fc.constant(ids.projectId), impulseId: fc.constant(ids.id), name: opt(line(128)), tags: opt(fc.array(line(64), { maxLength: 4 })), type: opt(fc.constantFrom(...IMPULSE_TYPES)), updated: iso }, { requiredKeys: ['projectId', 'impulseId', 'updated'] }),
  ImpulseDeleted: (ids) => fc.record({ projectId: fc.constant(ids.projectId), impulseId: fc.constant(ids.id), deleted: iso }),
  BlockIdIssued: (ids) => fc.record({ projectId: fc.constant(ids.projectId), blockId: fc.integer({ min: 1, max: 2 ** 31 - 1 }), issued: iso }),
  DspConfigSet: (ids) =>
    fc.record({
      projectId: fc.constant(ids.projectId),
      impulseId: fc.constant(ids.id),
      dspId: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      // Parameter names come from the block catalog (identifiers); values are free text.
      config: fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9-]{0,31}$/), line(1024, true), { maxKeys: 4 }),
      set: iso,
    }),
  DspBlockCleared: (ids) => fc.record({ projectId: fc.constant(ids.projectId), impulseId: fc.constant(ids.id), dspId: fc.integer({ min: 1, max: 2 ** 31 - 1 }), cleared: iso }),
};
