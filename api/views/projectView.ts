import type { DeviceDocument } from '../../projections/devices/deviceDocument';
import type { CategorySummary, ProjectDocument } from '../../projections/projects/projectDocument';
import { labelFromKey } from '../../projections/samples/sampleDocument';
import type { UserDocument } from '../../projections/users/userDocument';
import { userView } from './userView';

export interface UserViewSettings {
  staffUsernames: ReadonlySet<string>;
  publicUrl: string;
}

export type UsersById = ReadonlyMap<number, UserDocument>;

const displayName = (u: UserDocument | undefined): string => u?.name ?? u?.username ?? 'Unknown user';

/** The SDK's Project, as listed and as nested in project information. */
export function projectView(p: ProjectDocument, users: UsersById, settings: UserViewSettings): Record<string, unknown> {
  const owner = users.get(p.ownerUserId);
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    created: p.created,
    owner: displayName(owner),
    lastModified: p.lastModified,
    lastModificationDetails: p.lastModificationDetails,
    ownerUserId: p.ownerUserId,
    ownerIsDeveloperProfile: false,
    collaborators: p.collaborators.flatMap((c) => {
      const u = users.get(c.userId);
      return u ? [{ ...userView(u, settings.staffUsernames, settings.publicUrl), isOwner: c.isOwner }] : [];
    }),
    labelingMethod: 'single_label',
    metadata: {},
    isEnterpriseProject: false,
    whitelabelId: null,
    tags: [],
    tier: 'free',
    hasPublicVersion: false,
    isPublic: p.isPublic,
    allowsLivePublicAccess: false,
    indPauseProcessingSamples: false,
    publicProjectListed: false,
  };
}

/** ProjectDataSummary from the per-label counts the samples projection keeps. */
function summaryView(summaries: readonly CategorySummary[], truncateLabels: boolean): Record<string, unknown> {
  const counts = new Map<string, number>();
  for (const s of summaries) for (const [key, n] of Object.entries(s.labels)) counts.set(key, (counts.get(key) ?? 0) + n);
  const labels = [...counts].filter(([, n]) => n > 0).map(([key]) => labelFromKey(key)).sort();
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
    sensors: [],
    remote_mgmt_connected: false,
    supportsSnapshotStreaming: false,
    remoteMgmtMode: 'disconnected',
  };
}

export interface ProjectInfoOptions {
  devices: readonly DeviceDocument[];
  truncateLabels: boolean;
  staffUsernames: ReadonlySet<string>;
  /** Development keys are shown only to a JWT-authenticated user (the spec's rule since January 2026). */
  showDevelopmentKeys: boolean;
  studioUrl: string;
  now: Date;
}

/** ProjectInfoResponse (without `success`): every required field, from the read models. */
export function projectInfoView(p: ProjectDocument, users: UsersById, options: ProjectInfoOptions): Record<string, unknown> {
  const periodStart = new Date(Date.UTC(options.now.getUTCFullYear(), options.now.getUTCMonth(), 1));
  const periodEnd = new Date(Date.UTC(options.now.getUTCFullYear(), options.now.getUTCMonth() + 1, 1));
  const jobLimitM = 20;
  return {
    project: projectView(p, users, { staffUsernames: options.staffUsernames, publicUrl: options.studioUrl }),
    developmentKeys: options.showDevelopmentKeys
      ? { apiKey: p.developmentApiKey ?? undefined, hmacKey: p.developmentHmacKey ?? undefined }
      : { apiKey: undefined, hmacKey: undefined },
    impulse: { created: false, configured: false, complete: false },
    devices: options.devices.map(deviceView),
    dataSummary: summaryView([p.data.training, p.data.testing, p.data.validation, p.data.postProcessing], options.truncateLabels),
    dataSummaryPerCategory: {
      training: summaryView([p.data.training], options.truncateLabels),
      testing: summaryView([p.data.testing], options.truncateLabels),
      validation: summaryView([p.data.validation], options.truncateLabels),
      postProcessing: summaryView([p.data.postProcessing], options.truncateLabels),
    },
    computeTime: {
      periodStartDate: periodStart.toISOString(),
      periodEndDate: periodEnd.toISOString(),
      timeUsedMs: 0,
      timeLeftMs: jobLimitM * 60_000,
    },
    acquisitionSettings: {
      intervalMs: 16,
      lengthMs: 10_000,
      segmentShift: false,
      defaultPageSize: 20,
      viewType: 'list',
      gridColumnCount: 3,
      gridColumnCountDetailed: 2,
      showExactSampleLength: false,
      inlineEditBoundingBoxes: false,
    },
    collaborators: p.collaborators.flatMap((c) => {
      const u = users.get(c.userId);
      return u ? [userView(u, options.staffUsernames, options.studioUrl)] : [];
    }),
    deploySettings: {
      eonCompiler: true,
      sensor: 'unknown',
      arduinoLibraryName: libraryName(p.name),
      tinkergenLibraryName: libraryName(p.name),
      particleLibraryName: libraryName(p.name),
    },
    experiments: [],
    latencyDevices: [],
    urls: {},
    showCreateFirstImpulse: true,
    showGettingStartedWizard: { showWizard: false, step: 1 },
    performance: { gpu: false, jobLimitM, dspFileSizeMb: 100, enterprisePerformance: false, trainJobRamMb: 4096 },
    trainJobNotificationUids: [],
    dspJobNotificationUids: [],
    modelTestingJobNotificationUids: [],
    exportJobNotificationUids: [],
    hasNewTrainingData: p.hasNewTrainingData,
    studioUrl: `${options.studioUrl}/studio/${p.id}`,
    inPretrainedModelFlow: false,
    showSensorDataInAcquisitionGraph: false,
    notifications: [],
    dspPageSize: 20,
    anomalyLabelsConfig: { anomalyLabels: ['anomaly'], noAnomalyLabels: ['no anomaly'] },
    datasetSplitOptions: { trainingSplitRatio: 0.8, testingSplitRatio: 0.2 },
    explicitValidationEnabled: false,
  };
}

/** Library names as the deployment targets want them: letters, digits and underscores. */
function libraryName(projectName: string): string {
  const cleaned = projectName.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  return `${cleaned || 'project'}_inferencing`;
}
