import { emailDecider, type EmailCommand } from '../../domain/email/emailDecider';
import { emailStream } from '../../domain/email/emailEvents';
import { deviceDecider, type DeviceCommand } from '../../domain/device/deviceDecider';
import { deviceStream } from '../../domain/device/deviceEvents';
import { checkSample, type SampleDescription } from '../../domain/sample/checkSample';
import { sampleDecider } from '../../domain/sample/sampleDecider';
import { sampleStream } from '../../domain/sample/sampleEvents';
import { projectDecider, type ProjectCommand } from '../../domain/project/projectDecider';
import { apiKeyUsageStream, projectStream, type ProjectEvent } from '../../domain/project/projectEvents';
import { fold, type DomainEvent } from '../../domain/shared/decider';
import { organizationDecider, type OrganizationCommand } from '../../domain/organization/organizationDecider';
import { organizationStream, type OrganizationEvent } from '../../domain/organization/organizationEvents';
import { oauthArtifactDecider, type OAuthArtifactCommand } from '../../domain/oauth/oauthArtifactDecider';
import { oauthArtifactStream, type OAuthArtifactEvent } from '../../domain/oauth/oauthArtifactEvents';
import { oauthClientDecider, type OAuthClientCommand } from '../../domain/oauth/oauthClientDecider';
import { oauthClientStream, type OAuthClientEvent } from '../../domain/oauth/oauthClientEvents';
import { whitelabelDecider, type WhitelabelCommand } from '../../domain/whitelabel/whitelabelDecider';
import { whitelabelStream, type WhitelabelEvent } from '../../domain/whitelabel/whitelabelEvents';
import { userDecider, type UserCommand } from '../../domain/user/userDecider';
import { userStream } from '../../domain/user/userEvents';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import { impulseSampleEvents } from './impulseSampleLog';
import { whitelabelSettings } from './whitelabelSettings';
import { dspFeaturesDecider, type DspFeaturesCommand } from '../../domain/dsp/dspFeaturesDecider';
import { dspFeaturesStream } from '../../domain/dsp/dspFeaturesEvents';
import fc from 'fast-check';
import { allProjections } from '../../projections';
import { historyProjection } from '../../projections/history/historyProjection';
import { eventGenerators, type Ids } from '../projections/eventArbitraries';
import { impulsesStream } from '../../domain/impulse/impulseEvents';
import type { ReadStore } from '../../stores/readstore/readStore';
import { jobDecider, type JobCommand } from '../../domain/job/jobDecider';
import { jobStream } from '../../domain/job/jobEvents';

/** Every collection the projections write, for snapshots (the auditors' index aside: it records when, not what). */
export const READ_MODEL_COLLECTIONS: readonly string[] = allProjections.filter((p) => p !== historyProjection).flatMap((p) => [...p.writes]);

/** A small but complete log, made by the deciders: it holds every event type a projection handles. */
export function sampleLog(): StoredEvent[] {
  const now = new Date('2026-11-25T12:00:00.000Z');
  const batches: [string, DomainEvent[]][] = [];
  // Ada goes through every account step; Bob registers; Cy registers and deletes the account.
  const day = 24 * 3600 * 1000;
  for (const [userId, username] of [[1, 'ada'], [2, 'bob'], [3, 'cy']] as const) {
    const commands: UserCommand[] = [
      {
        type: 'RegisterUser',
        data: {
          userId, username, name: username.toUpperCase(), email: `${username}@example.com`, jobTitle: null, companyName: null, passwordHash: 'h',
          privacyPolicy: true, firstUser: userId === 1, activationCode: { hash: 'code', expires: new Date(now.getTime() + day) }, now,
        },
      },
    ];
    if (userId === 1) {
      commands.push(
        { type: 'ActivateUser', data: { codeHash: 'code', now } },
        { type: 'ChangePassword', data: { currentPasswordOk: true, passwordHash: 'h2', now } },
        { type: 'CreateTotpKey', data: { key: 'KEY', now } },
        { type: 'EnableTotp', data: { key: 'KEY', timeStep: 100, recoveryCodeHashes: ['r1'], now } },
        { type: 'RecordLogin', data: { passwordOk: true, totpGiven: true, totpTimeStep: 101, totpHash: null, address: '127.0.0.1', now } },
        { type: 'ClearTotp', data: { timeStep: 102, now } },
        { type: 'UpdateProfile', data: { name: 'Ada L.', jobTitle: 'Engineer', experiments: ['dark-mode'], now } },
        { type: 'AcceptTermsOfService', data: { version: 'v1', now } },
        { type: 'AcceptEula', data: { name: 'syntiant', version: '2022-08', now } },
        { type: 'DismissNotification', data: { notification: 'welcome', now } },
        { type: 'ChangePhoto', data: { photo: 'abc', now } },
        { type: 'CreateDeveloperProfile', data: { organizationId: 30, now } },
        { type: 'StartEnterpriseTrial', data: { trialId: 40, organizationId: 31, expirationDate: new Date(now.getTime() + 14 * day), notes: null, now } },
        { type: 'StartSubscriptionCheckout', data: { checkoutId: 'co_1', now } },
        { type: 'ActivateSubscription', data: { checkoutId: 'co_1', periodStart: now, periodEnd: new Date(now.getTime() + 30 * day), now } },
        { type: 'CancelSubscription', data: { reason: null, now } },
        { type: 'UndoCancelSubscription', data: { now } },
        { type: 'CancelSubscription', data: { reason: 'too expensive', now } },
        { type: 'EndSubscription', data: { now: new Date(now.getTime() + 31 * day) } },
      );
    }
    if (userId === 3) commands.push({ type: 'DeleteUser', data: { passwordOk: true, totpTimeStep: null, now } });
    let state = userDecider.initialState();
    const events: DomainEvent[] = [];
    for (const command of commands) {
      for (const e of userDecider.decide(command, state)) {
        events.push(e);
        state = userDecider.evolve(state, e);
      }
    }
    batches.push([userStream(userId), events]);
  }
  // Organization 30 is a developer profile; 31 goes through every member, key and settings step; 32 is deleted.
  for (const [organizationId, trialId] of [[30, null], [31, 40], [32, 41]] as const) {
    const commands: OrganizationCommand[] = [
      { type: 'CreateOrganization', data: { organizationId, name: `org ${organizationId}`, isDeveloperProfile: organizationId === 30, ownerUserId: 1, trialId, now } },
    ];
    if (organizationId === 31) {
      commands.push(
        { type: 'UpdateOrganization', data: { changes: { name: 'Navy labs', readme: '# Labs', showHeaderImgMask: true }, now } },
        // User 2 joins by accepting; a name no account has (a user id none will have) is declined by nobody and withdrawn.
        { type: 'InviteMember', data: { invitationId: 311, userId: 2, invitedAs: 'bob', role: 'guest', datasets: ['wrists'], invitedByUserId: 1, acceptedOnActivation: false, now } },
        { type: 'InviteMember', data: { invitationId: 312, userId: 2, invitedAs: 'bob@example.com', role: 'member', datasets: [], invitedByUserId: 1, acceptedOnActivation: false, now } },
        { type: 'DeclineMemberInvitation', data: { invitationId: 312, userId: 2, now } },
        { type: 'InviteMember', data: { invitationId: 313, userId: 9999, invitedAs: 'nobody', role: 'member', datasets: [], invitedByUserId: 1, acceptedOnActivation: false, now } },
        { type: 'WithdrawMemberInvitation', data: { invitationId: 313, withdrawnByUserId: 1, now } },
        { type: 'AcceptMemberInvitation', data: { invitationId: 311, userId: 2, now } },
        { type: 'SetMemberDatasets', data: { userId: 2, datasets: ['wrists', 'ankles'], now } },
        { type: 'SetMemberRole', data: { userId: 2, role: 'admin', now } },
        { type: 'RemoveMember', data: { userId: 2, now } },
        { type: 'AddApiKey', data: { apiKeyId: 310, name: 'CI', role: 'member', keyHash: 'hash31ci', keyHint: 'ei_org31ci', createdByUserId: 1, expires: null, now } },
        { type: 'RevokeApiKey', data: { apiKeyId: 310, now } },
      );
    } else if (organizationId === 32) commands.push({ type: 'DeleteOrganization', data: { now } });
    let state = organizationDecider.initialState();
    const events: OrganizationEvent[] = [];
    for (const command of commands) {
      for (const e of organizationDecider.decide(command, state)) {
        events.push(e);
        state = organizationDecider.evolve(state, e);
      }
    }
    batches.push([organizationStream(organizationId), events]);
  }
  // White label 50 is created, changed and deleted; 51 stays.
  for (const whitelabelId of [50, 51]) {
    const settings = whitelabelSettings({ name: `label ${whitelabelId}`, domain: `studio${whitelabelId}.example.com`, ownerOrganizationId: 31 });
    const commands: WhitelabelCommand[] = [{ type: 'CreateWhitelabel', data: { whitelabelId, settings, now } }];
    if (whitelabelId === 50) commands.push({ type: 'UpdateWhitelabel', data: { changes: { deploymentTargets: ['wasm'], allowSignup: false }, now } }, { type: 'DeleteWhitelabel', data: { now } });
    let state = whitelabelDecider.initialState();
    const events: WhitelabelEvent[] = [];
    for (const command of commands) {
      for (const e of whitelabelDecider.decide(command, state)) {
        events.push(e);
        state = whitelabelDecider.evolve(state, e);
      }
    }
    batches.push([whitelabelStream(whitelabelId), events]);
  }
  // Projects 10 and 11 live; project 10 goes through every settings, key and collaborator step;
  // project 12 is deleted and fully deleted.
  const later = new Date(now.getTime() + 1000);
  for (const [projectId, owner] of [[10, 1], [11, 2], [12, 1]] as const) {
    const commands: ProjectCommand[] = [
      {
        type: 'CreateProject',
        data: {
          projectId,
          name: `project ${projectId}`,
          ownerUserId: owner,
          isPublic: false,
          developmentApiKey: { id: projectId * 10, key: `ei_key${projectId}`, hash: `hash${projectId}` },
          developmentHmacKey: { id: projectId * 10 + 1, key: `hmac${projectId}` },
          // Project 11 is made in organization 31 on white label 51's domain; project 12 in organization 31 out of
          // any domain (so in white label 50, which is deleted later); project 10 is personal.
          ...(projectId === 11 ? { hostWhitelabel: { whitelabelId: 51, allowFreeProjects: false }, ownerOrganization: { organizationId: 31, whitelabelId: 51 } } : {}),
          ...(projectId === 12 ? { ownerOrganization: { organizationId: 31, whitelabelId: 50 } } : {}),
          now,
        },
      },
    ];
    if (projectId === 10) {
      commands.push(
        { type: 'AddCollaborator', data: { userId: 2, now: later } },
        { type: 'UpdateProject', data: { changes: { name: 'Gestures', readme: '# Gestures\n\nData from *wrists*.', trainJobNotificationUids: [1, 2], tags: ['motion'], performance: { useGpu: true } }, now: later } },
        { type: 'RemoveCollaborator', data: { userId: 2, now: later } },
        { type: 'AddApiKey', data: { apiKeyId: 102, name: 'CI', role: 'readonly', key: 'ei_ci_key_for_project_10_0123456789', hash: 'hash10ci', isDevelopmentKey: false, expires: null, createdByUserId: 1, now: later } },
        { type: 'AddApiKey', data: { apiKeyId: 103, name: 'New development key', role: 'admin', key: 'ei_dev_key_for_project_10_0123456789', hash: 'hash10dev', isDevelopmentKey: true, expires: null, createdByUserId: 1, now: later } },
        { type: 'RevokeApiKey', data: { apiKeyId: 102, now: later } },
        { type: 'AddHmacKey', data: { hmacKeyId: 104, name: 'Fleet', hmacKey: 'fleet-secret', isDevelopmentKey: true, createdByUserId: 1, now: later } },
        { type: 'RevokeHmacKey', data: { hmacKeyId: 101, now: later } },
      );
    }
    if (projectId === 11) {
      // Ada is invited and declines, is invited and withdrawn, accepts and is removed, and is invited again.
      const invite = (invitationId: number): ProjectCommand => ({ type: 'InviteCollaborator', data: { invitationId, userId: 1, invitedAs: 'ada', invitedByUserId: 2, now: later } });
      commands.push(
        invite(501),
        { type: 'DeclineCollaboratorInvitation', data: { invitationId: 501, userId: 1, now: later } },
        invite(502),
        { type: 'WithdrawCollaboratorInvitation', data: { invitationId: 502, withdrawnByUserId: 2, now: later } },
        invite(503),
        { type: 'AcceptCollaboratorInvitation', data: { invitationId: 503, userId: 1, now: later } },
        { type: 'RemoveCollaborator', data: { userId: 1, now: later } },
        invite(504),
      );
    }
    if (projectId === 12) {
      commands.push(
        { type: 'DeleteProject', data: { scheduledFullDeletionDate: later, now } },
        { type: 'FullyDeleteProject', data: { quarantinedBlobs: ['c'.repeat(64)], now: later } },
        { type: 'PurgeProjectBlobs', data: { purged: ['c'.repeat(64)], restored: [], now: later } },
      );
    }
    const events: ProjectEvent[] = [];
    for (const command of commands) events.push(...projectDecider.decide(command, fold(projectDecider, events)));
    batches.push([projectStream(projectId), events]);
  }
  batches.push([apiKeyUsageStream(103), [{ type: 'ApiKeyUsed', data: { projectId: 10, apiKeyId: 103, date: later.toISOString() } }]]);
  // One e-mail sent to a user, one to an address without an account that could not be sent.
  for (const [emailId, userId, outcome] of [
    [20, 1, { sent: true, providerResponse: '250 OK: queued as 20' }],
    [21, null, { sent: false, reason: 'No SMTP server is configured (SMTP_URL is not set)' }],
  ] as const) {
    const queue: EmailCommand = {
      type: 'QueueEmail',
      data: { emailId, userId, projectId: userId === null ? null : 10, from: 'noreply@example.com', to: `mail${emailId}@example.com`, subject: `Mail ${emailId}`, bodyText: 'Hello', bodyHTML: '<p>Hello</p>', now },
    };
    const queued = emailDecider.decide(queue, emailDecider.initialState());
    const recorded = emailDecider.decide({ type: 'RecordDelivery', data: { emailId, outcome, now } }, fold(emailDecider, queued));
    batches.push([emailStream(emailId), [...queued, ...recorded]]);
  }
  // Two samples in project 10, one from a device; the second is deleted.
  for (const [sampleId, deviceName, remove] of [[50, 'dev-1', false], [51, null, true]] as const) {
    const sample: SampleDescription = {
      projectId: 10, category: 'training', fileName: `s${sampleId}.json`, label: sampleId === 50 ? 'idle.x' : 'wave', sha256: 'ab'.repeat(32), size: 10,
      contentType: 'application/json', kind: 'time-series', intervalMs: 10, frequency: 100, sensors: [{ name: 'accX', units: 'm/s2' }], valuesCount: 5, totalLengthMs: 50,
      deviceName, deviceType: deviceName ? 'TEST' : null, width: null, height: null, signatureMethod: 'HS256', signatureValidate: true, signatureKeyId: null,
      metadata: {}, boundingBoxes: [], structuredLabels: [], uploadSource: null,
    };
    const ingested = sampleDecider.decide({ type: 'IngestSample', data: { ...checkSample(sample), sampleId, ingested: now.toISOString() } }, sampleDecider.initialState());
    const deleted = remove ? sampleDecider.decide({ type: 'DeleteSample', data: { now } }, fold(sampleDecider, ingested)) : [];
    batches.push([sampleStream(sampleId), [...ingested, ...deleted]]);
  }
  // Devices of project 10: dev-1 (seen in data) renamed, then connected to remote management
  // twice (the second socket replacing the first), asked for a sample and disconnected;
  // reg-2 registered, renamed and deleted.
  const hello = (connectionId: string): DeviceCommand => ({
    type: 'ConnectDevice',
    data: { projectId: 10, deviceId: 'dev-1', deviceType: 'TEST', id: 61, connectionId, host: '10.0.0.7', mode: 'ingestion', sensors: [{ name: 'Camera (640x480)', maxSampleLengthS: 60000, frequencies: [] }], supportsSnapshotStreaming: true, now },
  });
  const bye = (connectionId: string): DeviceCommand => ({ type: 'DisconnectDevice', data: { projectId: 10, deviceId: 'dev-1', connectionId, reason: 'closed', now } });
  for (const [deviceId, commands] of [
    ['dev-1', [
      { type: 'RenameDevice', data: { projectId: 10, deviceId: 'dev-1', name: 'Bench rig', seenInData: { lastSeen: now.toISOString() } } },
      hello('c1'),
      hello('c2'),
      { type: 'RequestSampling', data: { projectId: 10, deviceId: 'dev-1', requestId: 62, label: 'cat', lengthMs: 1000, category: 'training', intervalMs: 1, sensor: 'Camera (640x480)', now } },
      bye('c1'),
      bye('c2'),
    ]],
    ['reg-2', [
      { type: 'CreateDevice', data: { projectId: 10, deviceId: 'reg-2', deviceType: 'LINUX', ifNotExists: true, id: 60, seenInData: null, now } },
      { type: 'RenameDevice', data: { projectId: 10, deviceId: 'reg-2', name: 'Spare', seenInData: null } },
      { type: 'DeleteDevice', data: { projectId: 10, deviceId: 'reg-2', seenInData: null, now } },
    ]],
  ] as [string, DeviceCommand[]][]) {
    let state = deviceDecider.initialState();
    const events: DomainEvent[] = [];
    for (const command of commands) {
      for (const e of deviceDecider.decide(command, state)) {
        events.push(e);
        state = deviceDecider.evolve(state, e);
      }
    }
    batches.push([deviceStream(10, deviceId), events]);
  }
  // Jobs of project 10: one run to its end after a cancel request, one retried after its worker
  // went silent and then force-cancelled.
  const jobTime = (seconds: number) => new Date(now.getTime() + seconds * 1000);
  const request = (jobId: number): JobCommand => ({
    type: 'RequestJob',
    data: { jobId, projectId: 10, organizationId: null, category: 'Generate features', categoryKey: 'generate-features', key: '3', parameters: { dspId: 3 }, jobNotificationUids: [1], createdByUserId: 1, now },
  });
  const jobCommands: [number, JobCommand[]][] = [
    [1, [
      request(1),
      { type: 'StartJob', data: { jobId: 1, workerId: 'w1', now: jobTime(1) } },
      { type: 'WriteJobOutput', data: { jobId: 1, workerId: 'w1', attempt: 1, lines: [{ created: jobTime(2).toISOString(), data: 'a\n', logLevel: 'info' }, { created: jobTime(2).toISOString(), data: 'b\n', logLevel: 'warn' }] } },
      { type: 'RecordJobHeartbeat', data: { jobId: 1, workerId: 'w1', attempt: 1, now: jobTime(12) } },
      { type: 'UpdateJobNotifications', data: { jobId: 1, jobNotificationUids: [1, 2], allowedUids: [1, 2] } },
      { type: 'RequestJobCancel', data: { jobId: 1, force: false, userId: 1, now: jobTime(13) } },
      { type: 'FinishJob', data: { jobId: 1, workerId: 'w1', attempt: 1, successful: false, reason: null, computeTimeMs: 13_000, now: jobTime(14) } },
      { type: 'PlanJobNotifications', data: { jobId: 1, notifications: [{ userId: 1, emailId: 77 }] } },
    ]],
    [2, [
      request(2),
      { type: 'StartJob', data: { jobId: 2, workerId: 'w1', now: jobTime(1) } },
      { type: 'RecoverJob', data: { jobId: 2, workerId: 'w2', now: jobTime(100), leaseMs: 30_000, maxAttempts: 2 } },
      { type: 'RequestJobCancel', data: { jobId: 2, force: true, userId: 1, now: jobTime(101) } },
    ]],
  ];
  for (const [jobId, commands] of jobCommands) {
    let state = jobDecider.initialState();
    const events: DomainEvent[] = [];
    for (const command of commands) {
      for (const e of jobDecider.decide(command, state)) {
        events.push(e);
        state = jobDecider.evolve(state, e);
      }
    }
    batches.push([jobStream(jobId), events]);
  }
  // Impulses of project 10: every impulse event (see impulseSampleLog.ts).
  batches.push([impulsesStream(10), impulseSampleEvents(10, now)]);
  // Features of DSP block 2 of project 10, generated twice (the second supersedes), after the block was cleared.
  const features = (jobId: number, scaled: boolean): DspFeaturesCommand => ({
    type: 'RecordDspFeatures',
    data: {
      projectId: 10, impulseId: 62, dspId: 2, jobId,
      parameters: { dspId: 2, calculateFeatureImportance: false, skipFeatureExplorer: true, normalizeData: scaled ? 'normalize-channel-standard-scaler' : 'none' },
      dspConfig: { 'scale-axes': '1', 'input-decimation-ratio': '1' }, implementationVersion: 1,
      categories: { training: { x: 'a'.repeat(64), y: 'b'.repeat(64), windowCount: 3 }, testing: { x: 'c'.repeat(64), y: 'd'.repeat(64), windowCount: 1 } },
      metadata: 'e'.repeat(64), explorer: scaled ? 'f'.repeat(64) : null, importance: null, featureCount: 2, windowCount: 4, classes: ['idle', 'wave'], skippedSampleIds: [5],
      sourcePosition: '00000000000000000042', scaler: scaled ? { mean: [0.5, -1], scale: [1, 2] } : null, generated: now.toISOString(),
    },
  });
  let featuresState = dspFeaturesDecider.initialState();
  const featureEvents: DomainEvent[] = [];
  for (const command of [features(1, false), features(2, true)]) {
    for (const e of dspFeaturesDecider.decide(command, featuresState)) {
      featureEvents.push(e);
      featuresState = dspFeaturesDecider.evolve(featuresState, e);
    }
  }
  batches.push([dspFeaturesStream(10, 2), featureEvents]);
  // Learn blocks 4 (anomaly) and 5 (keras) of project 10: settings, then a trained model. Drawn from
  // the projection property tests' generators with a fixed seed (the same events every run).
  const learnIds: Ids = { userId: 1, projectId: 10, organizationId: 30, id: 4, otherUserId: 2, deviceId: 'dev-1' };
  const drawn = (type: keyof typeof eventGenerators, id: number): DomainEvent => {
    const generator = eventGenerators[type] as unknown as (ids: Ids) => fc.Arbitrary<Record<string, unknown>>;
    return { type, data: fc.sample(generator({ ...learnIds, id }), { numRuns: 1, seed: 22 })[0]! } as DomainEvent;
  };
  batches.push(['anomaly-10-4', [drawn('AnomalySettingsChanged', 4), drawn('AnomalyModelTrained', 4)]]);
  batches.push(['keras-10-5', [drawn('KerasSettingsSet', 5), drawn('KerasModelTrained', 5)]]);
  batches.push(['deployment-10', [drawn('DeploymentBuilt', 10)]]);
  batches.push(['versions-10', [drawn('VersionCreated', 70), drawn('VersionUpdated', 70), drawn('VersionCreated', 71), drawn('VersionDeleted', 71)]]);
  batches.push(['model-testing-10', [drawn('ModelTested', 0), drawn('ModelTested', 0)]]);
  batches.push(['optimize-config-10', [drawn('OptimizeConfigSet', 0), drawn('OptimizeConfigSet', 0)]]);
  // A tuner run of project 10 (its coordinator job 70): started, a trial planned, started, two epochs, finished, renamed, ended, its impulse added to the project.
  const trial = (type: keyof typeof eventGenerators): DomainEvent => {
    const e = drawn(type, 70);
    return { type: e.type, data: { ...e.data, trial: 0 } } as DomainEvent;
  };
  batches.push(['tuner-run-10-70', [drawn('TunerRunStarted', 70), trial('TunerTrialPlanned'), trial('TunerTrialStarted'), { ...trial('TunerTrialEpoch'), data: { ...trial('TunerTrialEpoch').data, epoch: 1 } } as DomainEvent, { ...trial('TunerTrialEpoch'), data: { ...trial('TunerTrialEpoch').data, epoch: 2 } } as DomainEvent, trial('TunerTrialFinished'), drawn('TunerRunRenamed', 70), drawn('TunerRunEnded', 70), trial('TunerTrialImpulseAdded')]]);
  // Two OAuth clients of user 1, the second deleted.
  for (const [clientId, remove] of [['sampleClientAAAAAAAAAA', false], ['sampleClientBBBBBBBBBB', true]] as const) {
    const commands: OAuthClientCommand[] = [
      { type: 'RegisterOAuthClient', data: { clientId, ownerUserId: 1, name: `Dashboard ${clientId.at(-1)}`, redirectUris: ['https://dash.example.com/cb', 'http://localhost:3000/cb'], secretHash: 'x'.repeat(43), liveClients: 0, now } },
    ];
    if (remove) commands.push({ type: 'DeleteOAuthClient', data: { clientId, requestedBy: 1, now } });
    let clientState = oauthClientDecider.initialState();
    const events: OAuthClientEvent[] = [];
    for (const command of commands) {
      for (const e of oauthClientDecider.decide(command, clientState)) {
        events.push(e);
        clientState = oauthClientDecider.evolve(clientState, e);
      }
    }
    batches.push([oauthClientStream(clientId), events]);
  }
  // Two grants of user 1 to the first client: one consented to twice and ended, one live.
  for (const [hash, end] of [['sampleGrantHashAAAAAAAAAAAAAAAAAAAAAAAAAAAA', true], ['sampleGrantHashBBBBBBBBBBBBBBBBBBBBBBBBBBBB', false]] as const) {
    const payload = { kind: 'Grant', accountId: '1', clientId: 'sampleClientAAAAAAAAAA', sessionVersion: 0, resources: { 'http://localhost/v1': 'user:read' } };
    const commands: OAuthArtifactCommand[] = [
      { type: 'SaveOAuthArtifact', data: { kind: 'Grant', payload, expiresInSeconds: 3600, now } },
      { type: 'SaveOAuthArtifact', data: { kind: 'Grant', payload: { ...payload, resources: { 'http://localhost/v1': 'user:read projects:read' } }, expiresInSeconds: 3600, now } },
    ];
    if (end) commands.push({ type: 'EndOAuthArtifact', data: { kind: 'Grant', reason: 'revoked', cause: 'password-changed', now } });
    let grantState = oauthArtifactDecider.initialState();
    const events: OAuthArtifactEvent[] = [];
    for (const command of commands) {
      for (const e of oauthArtifactDecider.decide(command, grantState)) {
        events.push(e);
        grantState = oauthArtifactDecider.evolve(grantState, e);
      }
    }
    batches.push([oauthArtifactStream('Grant', hash), events]);
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
