import type { ProjectDocument } from '../../projections/projects/projectDocument';
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

const emptySummary = () => ({ totalLengthMs: 0, labels: [], totalLabels: 0, dataCount: 0 });

export interface ProjectInfoOptions {
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
    devices: [],
    dataSummary: emptySummary(),
    dataSummaryPerCategory: {
      training: emptySummary(),
      testing: emptySummary(),
      validation: emptySummary(),
      postProcessing: emptySummary(),
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
    hasNewTrainingData: false,
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
