import type { DeviceDocument } from '../../projections/devices/deviceDocument';
import type { CategorySummary } from '../../projections/projects/projectDocument';
import type { Project } from '../../projections/projects/projectQueries';
import { labelFromKey } from '../../projections/samples/sampleDocument';
import type { UserDocument } from '../../projections/users/userDocument';
import type { WhitelabelQueries } from '../../projections/whitelabels/whitelabelQueries';
import { userView } from './userView';

export interface UserViewSettings {
  staffUsernames: ReadonlySet<string>;
  publicUrl: string;
}

export type UsersById = ReadonlyMap<number, UserDocument>;

/**
 * Who reads the project. Collaborators (users) see each other's profiles; an API key is a machine
 * credential, often kept on devices and CI, so it sees who collaborates (id, username, name) but no
 * personal data: no e-mail, last-seen time, job title, company or photo.
 */
export type ProjectAudience = 'collaborator' | 'apiKey';

/** A collaborator as `audience` may see them. */
export function collaboratorView(u: UserDocument, audience: ProjectAudience, viewSettings: UserViewSettings): Record<string, unknown> {
  const full = userView(u, viewSettings.staffUsernames, viewSettings.publicUrl);
  if (audience === 'collaborator') return full;
  const { email: _email, lastSeen: _lastSeen, jobTitle: _jobTitle, companyName: _companyName, photo: _photo, ...rest } = full;
  // `email` is a required string of the SDK's User.
  return { ...rest, email: '' };
}

/**
 * Invitations not answered yet, for collaborators only: what the inviter typed, never the invitee's
 * profile. Invitations to accounts deleted since are left out.
 */
export function invitationsView(p: Project, users: UsersById): Record<string, unknown>[] {
  return (p.invitations ?? []).flatMap((i) => {
    const invitedBy = users.get(i.invitedByUserId);
    return (i.userId === null || users.has(i.userId)) && i.invitedAs !== null
      ? [{ id: i.invitationId, usernameOrEmail: i.invitedAs, invited: i.invited, ...(invitedBy ? { invitedBy: { id: invitedBy.id, username: invitedBy.username } } : {}) }]
      : [];
  });
}

const displayName = (u: UserDocument | undefined): string => u?.name ?? u?.username ?? 'Unknown user';

/** Names of live white labels by id: a project of a deleted white label keeps its id and has no name. */
export type WhitelabelNames = ReadonlyMap<number, string>;

/** The SDK's Project, as listed and as nested in project information. */
export function projectView(
  p: Project,
  users: UsersById,
  viewSettings: UserViewSettings,
  audience: ProjectAudience = 'collaborator',
  whitelabelNames: WhitelabelNames = new Map(),
): Record<string, unknown> {
  const whitelabelId = p.whitelabelId ?? null;
  const whitelabelName = whitelabelId === null ? undefined : whitelabelNames.get(whitelabelId);
  const owner = users.get(p.ownerUserId);
  const settings = p.settings ?? {};
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    created: p.created,
    owner: displayName(owner),
    lastModified: p.lastModified,
    lastModificationDetails: p.lastModificationDetails,
    ownerUserId: p.ownerUserId,
    ...(p.ownerOrganizationId ? { ownerOrganizationId: p.ownerOrganizationId } : {}),
    ownerIsDeveloperProfile: false,
    collaborators: p.collaborators.flatMap((c) => {
      const u = users.get(c.userId);
      return u ? [{ ...collaboratorView(u, audience, viewSettings), isOwner: c.isOwner }] : [];
    }),
    labelingMethod: settings.labelingMethod ?? 'single_label',
    metadata: settings.metadata ?? {},
    isEnterpriseProject: false,
    whitelabelId,
    ...(whitelabelName !== undefined ? { whitelabelName } : {}),
    tags: settings.tags ?? [],
    // A personal project has its owner's plan.
    tier: owner?.tier ?? 'free',
    hasPublicVersion: false,
    isPublic: p.isPublic,
    allowsLivePublicAccess: false,
    indPauseProcessingSamples: settings.indPauseProcessingSamples ?? false,
    publicProjectListed: settings.publicProjectListed ?? false,
    ...(settings.logo ? { logo: settings.logo } : {}),
    ...(p.deletedDate ? { deletedDate: p.deletedDate } : {}),
    ...(p.scheduledFullDeletionDate ? { scheduledFullDeletionDate: p.scheduledFullDeletionDate } : {}),
    ...(p.fullDeletionDate ? { fullDeletionDate: p.fullDeletionDate } : {}),
  };
}

/**
 * Label keys decoded once per answer: the same few keys come up in every category's summary, and
 * decoding them (base64url through a Buffer) was a quarter of building project information.
 */
function labelDecoder(): (key: string) => string {
  const decoded = new Map<string, string>();
  return (key) => {
    let label = decoded.get(key);
    if (label === undefined) decoded.set(key, (label = labelFromKey(key)));
    return label;
  };
}

/** ProjectDataSummary from the per-label counts the samples projection keeps. */
function summaryView(summaries: readonly CategorySummary[], truncateLabels: boolean, label: (key: string) => string): Record<string, unknown> {
  const counts = new Map<string, number>();
  for (const s of summaries) for (const [key, n] of Object.entries(s.labels)) counts.set(key, (counts.get(key) ?? 0) + n);
  const labels = [...counts].filter(([, n]) => n > 0).map(([key]) => label(key)).sort();
  return {
    totalLengthMs: summaries.reduce((t, s) => t + s.totalLengthMs, 0),
    labels: truncateLabels ? labels.slice(0, TRUNCATED_LABELS) : labels,
    totalLabels: labels.length,
    dataCount: summaries.reduce((t, s) => t + s.dataCount, 0),
  };
}

const TRUNCATED_LABELS = 20;

export function deviceView(d: DeviceDocument): Record<string, unknown> {
  return {
    id: d.id,
    deviceId: d.deviceId,
    created: d.created,
    lastSeen: d.lastSeen,
    name: d.name,
    deviceType: d.deviceType,
    sensors: d.sensors ?? [],
    remote_mgmt_connected: d.remoteMgmtConnected ?? false,
    ...(d.remoteMgmtConnected && d.remoteMgmtHost ? { remote_mgmt_host: d.remoteMgmtHost } : {}),
    supportsSnapshotStreaming: d.supportsSnapshotStreaming ?? false,
    remoteMgmtMode: d.remoteMgmtMode ?? 'disconnected',
    ...(d.remoteMgmtMode === 'inference' && d.inferenceInfo ? { inferenceInfo: d.inferenceInfo } : {}),
  };
}

export interface ProjectInfoOptions {
  devices: readonly DeviceDocument[];
  truncateLabels: boolean;
  staffUsernames: ReadonlySet<string>;
  /** Development keys are shown only to a JWT-authenticated user (the spec's rule since January 2026). */
  showDevelopmentKeys: boolean;
  studioUrl: string;
  audience: ProjectAudience;
  /** The selected impulse's progress and the project's default impulse. */
  impulse: { created: boolean; configured: boolean; complete: boolean; defaultImpulseId: number | null };
  now: Date;
  /** Compute time of the project's jobs that finished in the calendar month of `now`. */
  computeTimeUsedMs: number;
  whitelabelNames: WhitelabelNames;
}

/** The limits a project has unless staff set others. */
export const DEFAULT_LIMITS = { gpu: false, jobLimitM: 20, dspFileSizeMb: 100, enterprisePerformance: false, trainJobRamMb: 4096 };

/** ProjectInfoResponse (without `success`): every required field, from the read models. */
export function projectInfoView(p: Project, users: UsersById, options: ProjectInfoOptions): Record<string, unknown> {
  const s = p.settings ?? {};
  const limits = {
    gpu: s.performance?.useGpu ?? DEFAULT_LIMITS.gpu,
    jobLimitM: s.performance?.computeTimeLimitM ?? DEFAULT_LIMITS.jobLimitM,
    dspFileSizeMb: s.performance?.dspFileSizeMb ?? DEFAULT_LIMITS.dspFileSizeMb,
    enterprisePerformance: s.performance?.enterprisePerformance ?? DEFAULT_LIMITS.enterprisePerformance,
    trainJobRamMb: s.performance?.trainJobRamMb ?? DEFAULT_LIMITS.trainJobRamMb,
  };
  // Compute time is counted per calendar month (UTC): the jobs that finished in it.
  const periodStart = new Date(Date.UTC(options.now.getUTCFullYear(), options.now.getUTCMonth(), 1));
  const periodEnd = new Date(Date.UTC(options.now.getUTCFullYear(), options.now.getUTCMonth() + 1, 1));
  const timeUsedMs = options.computeTimeUsedMs;
  const training = p.data.training;
  const label = labelDecoder();
  const labels = Object.keys(training.labels).filter((k) => (training.labels[k] ?? 0) > 0).map(label).sort();
  return {
    project: projectView(p, users, { staffUsernames: options.staffUsernames, publicUrl: options.studioUrl }, options.audience, options.whitelabelNames),
    developmentKeys: options.showDevelopmentKeys
      ? { apiKey: p.developmentApiKey ?? undefined, hmacKey: p.developmentHmacKey ?? undefined }
      : { apiKey: undefined, hmacKey: undefined },
    impulse: { created: options.impulse.created, configured: options.impulse.configured, complete: options.impulse.complete },
    devices: options.devices.map(deviceView),
    dataSummary: summaryView([p.data.training, p.data.testing, p.data.validation, p.data.postProcessing], options.truncateLabels, label),
    dataSummaryPerCategory: {
      training: summaryView([p.data.training], options.truncateLabels, label),
      testing: summaryView([p.data.testing], options.truncateLabels, label),
      validation: summaryView([p.data.validation], options.truncateLabels, label),
      postProcessing: summaryView([p.data.postProcessing], options.truncateLabels, label),
    },
    computeTime: {
      periodStartDate: periodStart.toISOString(),
      periodEndDate: periodEnd.toISOString(),
      timeUsedMs,
      timeLeftMs: Math.max(0, limits.jobLimitM * 60_000 - timeUsedMs),
    },
    acquisitionSettings: {
      intervalMs: 16,
      lengthMs: 10_000,
      segmentShift: false,
      defaultPageSize: s.dataAcquisitionPageSize ?? 20,
      viewType: s.dataAcquisitionViewType ?? 'list',
      gridColumnCount: s.dataAcquisitionGridColumnCount ?? 3,
      gridColumnCountDetailed: s.dataAcquisitionGridColumnCountDetailed ?? 2,
      showExactSampleLength: s.showExactSampleLength ?? false,
      inlineEditBoundingBoxes: s.inlineEditBoundingBoxes ?? false,
      ...(s.lastAcquisitionLabel !== undefined ? { label: s.lastAcquisitionLabel } : {}),
    },
    collaborators: p.collaborators.flatMap((c) => {
      const u = users.get(c.userId);
      return u ? [collaboratorView(u, options.audience, { staffUsernames: options.staffUsernames, publicUrl: options.studioUrl })] : [];
    }),
    ...(options.audience === 'collaborator' ? { collaboratorInvitations: invitationsView(p, users) } : {}),
    deploySettings: {
      eonCompiler: s.lastDeployEonCompiler ?? true,
      sensor: deploySensor(p),
      arduinoLibraryName: libraryName(p.name),
      tinkergenLibraryName: libraryName(p.name),
      particleLibraryName: libraryName(p.name),
      ...(s.lastDeployModelEngine ? { lastDeployModelEngine: s.lastDeployModelEngine } : {}),
    },
    experiments: (s.experiments ?? []).map((type) => ({ type, title: type, enabled: true, showToUser: true })),
    latencyDevices: [],
    urls: {},
    showCreateFirstImpulse: (s.showCreateFirstImpulse ?? true) && !options.impulse.created,
    showGettingStartedWizard: {
      showWizard: false,
      step: s.gettingStartedStep ?? 1,
      ...(s.gettingStartedTutorial ? { tutorial: s.gettingStartedTutorial } : {}),
      classes: s.gettingStartedClasses ?? labels,
    },
    performance: limits,
    trainJobNotificationUids: s.trainJobNotificationUids ?? [],
    dspJobNotificationUids: s.dspJobNotificationUids ?? [],
    modelTestingJobNotificationUids: s.modelTestingJobNotificationUids ?? [],
    exportJobNotificationUids: s.exportJobNotificationUids ?? [],
    hasNewTrainingData: p.hasNewTrainingData,
    studioUrl: `${options.studioUrl}/studio/${p.id}`,
    inPretrainedModelFlow: s.inPretrainedModelFlow ?? false,
    showSensorDataInAcquisitionGraph: s.showSensorDataInAcquisitionGraph ?? false,
    notifications: [],
    ...(p.readme ? { readme: { markdown: p.readme.markdown, html: p.readme.html } } : {}),
    ...(s.csvImportConfig ? { csvImportConfig: s.csvImportConfig } : {}),
    dspPageSize: s.dspPageSize ?? 20,
    ...(s.windowJobConcurrency !== undefined ? { windowJobConcurrency: s.windowJobConcurrency } : {}),
    ...(s.targetConstraints ? { targetConstraints: s.targetConstraints } : {}),
    ...(options.impulse.defaultImpulseId !== null ? { defaultImpulseId: options.impulse.defaultImpulseId } : {}),
    ...(s.lastShownModelEngine ? { lastShownModelEngine: s.lastShownModelEngine } : {}),
    ...(s.versioningStorageSizeMib !== undefined ? { versioningStorageSizeMib: s.versioningStorageSizeMib } : {}),
    anomalyLabelsConfig: s.anomalyLabelsConfig ?? { anomalyLabels: ['anomaly'], noAnomalyLabels: ['no anomaly'] },
    datasetSplitOptions: s.datasetSplitOptions ?? { trainingSplitRatio: 0.8, testingSplitRatio: 0.2 },
    explicitValidationEnabled: s.explicitValidationEnabled ?? false,
  };
}

/** The kind of sensor the project's data comes from, from what its samples are. */
function deploySensor(p: Project): string {
  const kinds: Record<string, number> = p.sampleKinds ?? {};
  const present = Object.keys(kinds).filter((k) => (kinds[k] ?? 0) > 0);
  if (present.length === 0) return 'unknown';
  if (present.length > 1) return 'fusion';
  const sensors: Record<string, string> = { image: 'camera', video: 'camera', audio: 'microphone', 'time-series': 'accelerometer' };
  return sensors[present[0]!] ?? 'unknown';
}

/** Library names as the deployment targets want them: letters, digits and underscores. */
function libraryName(projectName: string): string {
  const cleaned = projectName.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  return `${cleaned || 'project'}_inferencing`;
}

/** What the listings need: the users of the projects, their white labels, and the settings of the user views. */
export interface ProjectViewDeps {
  users: { byIds(ids: number[]): Promise<UserDocument[]> };
  whitelabels: Pick<WhitelabelQueries, 'byIds'>;
  settings: UserViewSettings;
}

/** The names of the live white labels these projects belong to, fetched in one query. */
export async function whitelabelNamesOf(deps: Pick<ProjectViewDeps, 'whitelabels'>, projects: readonly Project[]): Promise<Map<number, string>> {
  const ids = projects.flatMap((p) => (typeof p.whitelabelId === 'number' ? [p.whitelabelId] : []));
  return new Map((await deps.whitelabels.byIds(ids)).map((w) => [w.id, w.name]));
}

/** The users a set of projects refers to (owners and collaborators), fetched in one query. */
export async function usersOfProjects(deps: ProjectViewDeps, projects: readonly Project[]): Promise<Map<number, UserDocument>> {
  const ids = new Set<number>();
  for (const p of projects) {
    ids.add(p.ownerUserId);
    for (const c of p.collaborators) ids.add(c.userId);
    for (const i of p.invitations ?? []) {
      if (i.userId !== null) ids.add(i.userId);
      ids.add(i.invitedByUserId);
    }
  }
  const users = await deps.users.byIds([...ids]);
  return new Map(users.map((u) => [u.id, u]));
}

export async function projectViews(deps: ProjectViewDeps, projects: readonly Project[], audience: ProjectAudience = 'collaborator'): Promise<Record<string, unknown>[]> {
  const [users, whitelabelNames] = await Promise.all([usersOfProjects(deps, projects), whitelabelNamesOf(deps, projects)]);
  return projects.map((p) => projectView(p, users, deps.settings, audience, whitelabelNames));
}
