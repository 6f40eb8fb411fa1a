// Request schemas of updateProject, updateProjectTags and setTargetConstraints: the SDK's
// UpdateProjectRequest field by field (unknown fields are refused, so a typo is not silently
// ignored), plus the settings the issue makes settable through it (datasetSplitOptions,
// defaultImpulseId). Cross-field and per-project rules live in domain/project/projectSettings.ts.
import { z } from 'zod';
import { LABELING_METHODS, MODEL_ENGINES, MODEL_VARIANTS, PROJECT_NAME_MAX } from '../../domain/project/projectSettings';

const uids = z.array(z.number().int().positive()).max(1000);
const shortText = z.string().max(1024);
const count = (max: number) => z.number().int().min(1).max(max);

const range = z.object({ minimum: z.number().optional(), maximum: z.number().optional() }).strict();
const memory = z
  .object({
    ram: z.object({ fastBytes: range.optional(), slowBytes: range.optional() }).strict().optional(),
    rom: z.object({ fastBytes: range.optional(), slowBytes: range.optional() }).strict().optional(),
  })
  .strict();

export const TargetConstraintsSchema = z
  .object({
    selectedTargetBasedOn: z.enum(['user-configured', 'default', 'default-accepted', 'recent-project', 'connected-device']).optional(),
    targetDevices: z
      .array(
        z
          .object({
            processors: z
              .array(
                z
                  .object({
                    part: shortText.optional(),
                    format: shortText.optional(),
                    architecture: shortText.optional(),
                    specificArchitecture: shortText.optional(),
                    accelerator: shortText.optional(),
                    fpu: z.boolean().optional(),
                    clockRateMhz: range.optional(),
                    memory: memory.optional(),
                  })
                  .strict(),
              )
              .max(16)
              .optional(),
            board: shortText.optional(),
            name: shortText.optional(),
            latencyDevice: shortText.optional(),
          })
          .strict(),
      )
      .max(32),
    applicationBudgets: z
      .array(z.object({ latencyPerInferenceMs: range.optional(), energyPerInferenceJoules: range.optional(), memoryOverhead: memory.optional() }).strict())
      .max(32),
  })
  .strict();

export const UpdateProjectRequest = z
  .object({
    logo: z.string().max(2048).nullable().optional(),
    name: z.string().min(1).max(PROJECT_NAME_MAX).optional(),
    description: z.string().max(10_000).optional(),
    projectVisibility: z.enum(['public', 'private']).optional(),
    publicProjectListed: z.boolean().optional(),
    lastDeployEonCompiler: z.boolean().optional(),
    lastDeployModelEngine: z.enum(MODEL_ENGINES).optional(),
    latencyDevice: shortText.optional(),
    experiments: z.array(z.string().min(1).max(128)).max(100).optional(),
    showCreateFirstImpulse: z.boolean().optional(),
    labelingMethod: z.enum(LABELING_METHODS).optional(),
    selectedProjectTypeInWizard: z.enum(['accelerometer', 'audio', 'image_classification', 'object_detection', 'something_else']).optional(),
    gettingStartedStep: z.number().int().min(0).max(100).optional(),
    gettingStartedTutorial: z.enum(['kws', 'cv']).optional(),
    gettingStartedClasses: z.array(z.string().max(128)).max(1000).optional(),
    useGpu: z.boolean().optional(),
    computeTimeLimitM: z.number().int().min(0).max(1_000_000).optional(),
    dspFileSizeMb: z.number().int().min(1).max(100_000).optional(),
    enterprisePerformance: z.boolean().optional(),
    trainJobRamMb: z.number().int().min(256).max(1_000_000).optional(),
    metadata: z.record(z.string().max(256), z.unknown()).optional(),
    readme: z.string().nullable().optional(),
    lastAcquisitionLabel: z.string().max(1024).optional(),
    trainJobNotificationUids: uids.optional(),
    dspJobNotificationUids: uids.optional(),
    modelTestingJobNotificationUids: uids.optional(),
    exportJobNotificationUids: uids.optional(),
    csvImportConfig: z.record(z.string(), z.unknown()).nullable().optional(),
    inPretrainedModelFlow: z.boolean().optional(),
    dspPageSize: count(1000).optional(),
    windowJobConcurrency: count(64).optional(),
    indPauseProcessingSamples: z.boolean().optional(),
    showSensorDataInAcquisitionGraph: z.boolean().optional(),
    lastDeploymentTarget: shortText.optional(),
    dataAcquisitionPageSize: count(1000).optional(),
    dataAcquisitionViewType: z.enum(['list', 'grid']).optional(),
    dataAcquisitionGridColumnCount: count(20).optional(),
    dataAcquisitionGridColumnCountDetailed: count(20).optional(),
    showExactSampleLength: z.boolean().optional(),
    inlineEditBoundingBoxes: z.boolean().optional(),
    defaultProfilingVariant: z.enum(MODEL_VARIANTS).optional(),
    enabledModelProfilingVariants: z.array(z.enum(MODEL_VARIANTS)).optional(),
    impulseListCoreMetricsHiddenColumns: z.array(z.string().max(128)).max(100).optional(),
    impulseListAdditionalMetricsShownColumns: z.array(z.string().max(128)).max(100).optional(),
    impulseListExtraColumns: z.array(z.string().max(128)).max(100).optional(),
    aiActionsGridColumnCount: count(20).optional(),
    lastShownModelEngine: z.enum(MODEL_ENGINES).optional(),
    versioningStorageSizeMib: z.number().int().min(0).max(10_000_000).optional(),
    anomalyLabelsConfig: z
      .object({ anomalyLabels: z.array(z.string().min(1).max(128)).max(100), noAnomalyLabels: z.array(z.string().min(1).max(128)).max(100) })
      .strict()
      .optional(),
    explicitValidationEnabled: z.boolean().optional(),
    datasetSplitOptions: z
      .object({
        trainingSplitRatio: z.number(),
        testingSplitRatio: z.number(),
        validationSplitRatio: z.number().optional(),
        excludeDisabledSamples: z.boolean().optional(),
        stratifyBy: z.object({ label: z.boolean().optional(), metadataKeys: z.array(z.string().max(128)).max(50).optional() }).strict().optional(),
        keepTogetherMetadataKeys: z.array(z.string().max(128)).max(50).optional(),
      })
      .strict()
      .optional(),
    defaultImpulseId: z.number().int().positive().nullable().optional(),
  })
  .strict();

export type UpdateProjectBody = z.infer<typeof UpdateProjectRequest>;

export const UpdateProjectTagsRequest = z.object({ tags: z.array(z.string()).max(50) }).strict();

/** Fields that set the limits the installation grants: staff only. */
export const PERFORMANCE_FIELDS = ['useGpu', 'computeTimeLimitM', 'dspFileSizeMb', 'enterprisePerformance', 'trainJobRamMb'] as const;
