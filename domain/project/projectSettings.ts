// What POST /api/{projectId} (updateProject), /tags and /target-constraints change: the project's
// settings, each optional in a change. The request schema checks shapes and enums; the rules that
// depend on the project (notification lists name collaborators) or on several fields (split ratios
// add up) are checked here, where the decider can apply them.
import { ValidationError } from '../shared/errors';
import { FREE_JSON_RULE, checkJsonValue, type JsonRule } from '../shared/jsonRules';
import { checkNumber, type NumberRule } from '../shared/numberRules';
import { refuseDeepNesting } from '../shared/markdownNesting';
import { checkText } from '../shared/textRules';

export const LABELING_METHODS = ['single_label', 'object_detection', 'label_map'] as const;
export const MODEL_ENGINES = ['tflite-eon', 'tflite-eon-ram-optimized', 'tflite'] as const;
export const MODEL_VARIANTS = ['int8', 'float32', 'akida'] as const;
export const NOTIFICATION_LISTS = ['trainJobNotificationUids', 'dspJobNotificationUids', 'modelTestingJobNotificationUids', 'exportJobNotificationUids'] as const;

export interface Range {
  minimum?: number;
  maximum?: number;
}
export interface MemorySpec {
  ram?: { fastBytes?: Range; slowBytes?: Range };
  rom?: { fastBytes?: Range; slowBytes?: Range };
}

export interface TargetConstraints {
  selectedTargetBasedOn?: 'user-configured' | 'default' | 'default-accepted' | 'recent-project' | 'connected-device';
  targetDevices: {
    processors?: {
      part?: string;
      format?: string;
      architecture?: string;
      specificArchitecture?: string;
      accelerator?: string;
      fpu?: boolean;
      clockRateMhz?: Range;
      memory?: MemorySpec;
    }[];
    board?: string;
    name?: string;
    latencyDevice?: string;
  }[];
  applicationBudgets: { latencyPerInferenceMs?: Range; energyPerInferenceJoules?: Range; memoryOverhead?: MemorySpec }[];
}

export interface DatasetSplitOptions {
  trainingSplitRatio: number;
  testingSplitRatio: number;
  validationSplitRatio?: number;
  excludeDisabledSamples?: boolean;
  stratifyBy?: { label?: boolean; metadataKeys?: string[] };
  keepTogetherMetadataKeys?: string[];
}

/** Limits only staff may change: they are what the installation grants a project. */
export interface PerformanceSettings {
  useGpu?: boolean;
  computeTimeLimitM?: number;
  dspFileSizeMb?: number;
  enterprisePerformance?: boolean;
  trainJobRamMb?: number;
}

export interface ProjectSettings {
  name: string;
  description: string;
  logo: string | null;
  isPublic: boolean;
  publicProjectListed: boolean;
  labelingMethod: (typeof LABELING_METHODS)[number];
  metadata: Record<string, unknown>;
  /** Markdown; null removes the readme. */
  readme: string | null;
  csvImportConfig: Record<string, unknown> | null;
  dspPageSize: number;
  windowJobConcurrency: number;
  trainJobNotificationUids: number[];
  dspJobNotificationUids: number[];
  modelTestingJobNotificationUids: number[];
  exportJobNotificationUids: number[];
  lastDeployEonCompiler: boolean;
  lastDeployModelEngine: (typeof MODEL_ENGINES)[number];
  lastShownModelEngine: (typeof MODEL_ENGINES)[number];
  lastDeploymentTarget: string;
  latencyDevice: string;
  experiments: string[];
  showCreateFirstImpulse: boolean;
  selectedProjectTypeInWizard: 'accelerometer' | 'audio' | 'image_classification' | 'object_detection' | 'something_else';
  gettingStartedStep: number;
  gettingStartedTutorial: 'kws' | 'cv';
  gettingStartedClasses: string[];
  lastAcquisitionLabel: string;
  inPretrainedModelFlow: boolean;
  indPauseProcessingSamples: boolean;
  showSensorDataInAcquisitionGraph: boolean;
  dataAcquisitionPageSize: number;
  dataAcquisitionViewType: 'list' | 'grid';
  dataAcquisitionGridColumnCount: number;
  dataAcquisitionGridColumnCountDetailed: number;
  showExactSampleLength: boolean;
  inlineEditBoundingBoxes: boolean;
  defaultProfilingVariant: (typeof MODEL_VARIANTS)[number];
  enabledModelProfilingVariants: (typeof MODEL_VARIANTS)[number][];
  impulseListCoreMetricsHiddenColumns: string[];
  impulseListAdditionalMetricsShownColumns: string[];
  impulseListExtraColumns: string[];
  aiActionsGridColumnCount: number;
  versioningStorageSizeMib: number;
  anomalyLabelsConfig: { anomalyLabels: string[]; noAnomalyLabels: string[] };
  explicitValidationEnabled: boolean;
  datasetSplitOptions: DatasetSplitOptions;
  defaultImpulseId: number | null;
  tags: string[];
  targetConstraints: TargetConstraints;
  performance: PerformanceSettings;
}

export type ProjectSettingsChange = Partial<ProjectSettings>;

export const PROJECT_NAME_MAX = 128;
export const README_MAX_CHARS = 100_000;
export const DESCRIPTION_MAX_CHARS = 10_000;
const TAG_MAX = 64;
const TAGS_MAX = 50;

/** Every other setting's strings (targets, labels, column names...): one line, as the request schema bounds them. */
const SETTING_JSON_RULE: JsonRule = { text: { max: 1024, allowEmpty: true }, key: { max: 256 }, maxDepth: 8, maxChars: 200_000 };
/** Free-form settings: stored as the client gives them, within FREE_JSON_RULE. */
const FREE_JSON_SETTINGS: readonly string[] = ['metadata', 'csvImportConfig'];

/** The numeric settings and their ranges (the request schema's, held here too). */
export const NUMBER_SETTINGS: Partial<Record<keyof ProjectSettings | keyof PerformanceSettings, NumberRule>> = {
  dspPageSize: { min: 1, max: 1000, integer: true },
  windowJobConcurrency: { min: 1, max: 64, integer: true },
  gettingStartedStep: { min: 0, max: 100, integer: true },
  dataAcquisitionPageSize: { min: 1, max: 1000, integer: true },
  dataAcquisitionGridColumnCount: { min: 1, max: 20, integer: true },
  dataAcquisitionGridColumnCountDetailed: { min: 1, max: 20, integer: true },
  aiActionsGridColumnCount: { min: 1, max: 20, integer: true },
  versioningStorageSizeMib: { min: 0, max: 10_000_000, integer: true },
  defaultImpulseId: { min: 1, max: Number.MAX_SAFE_INTEGER, integer: true },
  computeTimeLimitM: { min: 0, max: 1_000_000, integer: true },
  dspFileSizeMb: { min: 1, max: 100_000, integer: true },
  trainJobRamMb: { min: 256, max: 1_000_000, integer: true },
};

/**
 * The rules every value of a change must meet whatever the request schema let through: texts
 * bounded and free of control and bidirectional-override characters (the readme and description
 * may span lines), numbers finite and in range, free-form JSON storable as a sub-document.
 */
function checkValues(checked: ProjectSettingsChange): void {
  for (const [key, value] of Object.entries(checked) as [string, unknown][]) {
    const field = `"${key}"`;
    if (key === 'name') checkText(value as string, field, { max: PROJECT_NAME_MAX });
    else if (key === 'description') checkText(value as string, field, { max: DESCRIPTION_MAX_CHARS, multiline: true, allowEmpty: true });
    else if (key === 'readme') {
      if (value !== null) checkText(value as string, field, { max: README_MAX_CHARS, multiline: true, allowEmpty: true });
    } else if (key === 'logo') {
      if (value !== null) checkText(value as string, field, { max: 2048, allowEmpty: true });
    } else if (FREE_JSON_SETTINGS.includes(key)) checkJsonValue(value, field, FREE_JSON_RULE);
    else checkJsonValue(value, field, SETTING_JSON_RULE);
    const numberRule = NUMBER_SETTINGS[key as keyof typeof NUMBER_SETTINGS];
    if (numberRule && value !== null) checkNumber(value as number, field, numberRule);
  }
  for (const [key, value] of Object.entries(checked.performance ?? {}) as [string, unknown][]) {
    const numberRule = NUMBER_SETTINGS[key as keyof typeof NUMBER_SETTINGS];
    if (numberRule) checkNumber(value as number, `"performance.${key}"`, numberRule);
  }
}

/** Rules across fields and against the project; throws ValidationError naming the field. */
export function checkSettingsChange(change: ProjectSettingsChange, collaboratorIds: readonly number[]): ProjectSettingsChange {
  // Only fields that carry a value count: `{ name: undefined }` changes nothing.
  const checked = Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)) as ProjectSettingsChange;
  if (change.name !== undefined) {
    const name = change.name.trim();
    if (name === '') throw new ValidationError('"name": a project name must not be empty');
    if (name.length > PROJECT_NAME_MAX) throw new ValidationError(`"name": a project name is at most ${PROJECT_NAME_MAX} characters`);
    checked.name = name;
  }
  if (change.readme !== undefined && change.readme !== null && change.readme.length > README_MAX_CHARS) {
    throw new ValidationError(`"readme": at most ${README_MAX_CHARS} characters`);
  }
  if (change.readme !== undefined && change.readme !== null) refuseDeepNesting(change.readme, '"readme"');
  for (const list of NOTIFICATION_LISTS) {
    const uids = change[list];
    if (uids === undefined) continue;
    const stranger = uids.find((uid) => !collaboratorIds.includes(uid));
    if (stranger !== undefined) throw new ValidationError(`"${list}": user ${stranger} is not a collaborator on this project`);
    checked[list] = [...new Set(uids)];
  }
  if (change.datasetSplitOptions) {
    const { trainingSplitRatio: t, testingSplitRatio: s, validationSplitRatio: v = 0 } = change.datasetSplitOptions;
    for (const [field, ratio] of [['trainingSplitRatio', t], ['testingSplitRatio', s], ['validationSplitRatio', v]] as const) {
      if (!(ratio >= 0 && ratio <= 1)) throw new ValidationError(`"datasetSplitOptions.${field}" must be between 0 and 1`);
    }
    if (Math.abs(t + s + v - 1) > 1e-6) throw new ValidationError('"datasetSplitOptions": the training, testing and validation ratios must add up to 1');
  }
  if (change.anomalyLabelsConfig) {
    const clean = (labels: string[]) => [...new Set(labels.map((l) => l.trim()).filter((l) => l !== ''))];
    const anomalyLabels = clean(change.anomalyLabelsConfig.anomalyLabels);
    const noAnomalyLabels = clean(change.anomalyLabelsConfig.noAnomalyLabels);
    checked.anomalyLabelsConfig = { anomalyLabels, noAnomalyLabels };
    if (anomalyLabels.length === 0 || noAnomalyLabels.length === 0) throw new ValidationError('"anomalyLabelsConfig": both label lists need at least one label');
    const both = anomalyLabels.find((l) => noAnomalyLabels.includes(l));
    if (both !== undefined) throw new ValidationError(`"anomalyLabelsConfig": label "${both}" cannot be both an anomaly and not one`);
  }
  if (change.tags) {
    const tags = [...new Set(change.tags.map((t) => t.trim()))];
    if (tags.length > TAGS_MAX) throw new ValidationError(`"tags": at most ${TAGS_MAX} tags`);
    const bad = tags.find((t) => t === '' || t.length > TAG_MAX);
    if (bad !== undefined) throw new ValidationError(`"tags": each tag is 1 to ${TAG_MAX} characters`);
    checked.tags = tags;
  }
  checkValues(checked);
  return checked;
}

/** A readable account of a change, for `lastModificationDetails`. */
export function describeChange(change: ProjectSettingsChange): string {
  const fields = Object.keys(change);
  return `Project settings updated (${fields.join(', ')})`;
}
