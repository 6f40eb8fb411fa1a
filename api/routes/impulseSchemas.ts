// Request schemas of the impulse operations: the SDK's CreateImpulseRequest and its block types.
// Shapes only; whether the blocks make an impulse is the impulse decider's call.
import { z } from 'zod';
import { IMPULSE_TYPES, INPUT_BLOCK_TYPES, LEARN_BLOCK_TYPES } from '../../domain/impulse/blockCatalog';
import { withTextRule } from '../http/withTextRule';

const blockId = z.number().int();
const label = z.string().min(1).max(256).superRefine(withTextRule({ max: 256 }));
/** An impulse's name: its length is the decider's to judge (its message says the limit). */
const impulseName = z.string().superRefine(withTextRule({ max: Number.MAX_SAFE_INTEGER }));

const InputBlockRequest = z.object({
  id: blockId,
  type: z.enum(INPUT_BLOCK_TYPES),
  name: label.optional(),
  title: label.optional(),
  axes: z.array(z.string()).optional(),
  windowSizeMs: z.number().optional(),
  windowIncreaseMs: z.number().optional(),
  frequencyHz: z.number().optional(),
  classificationWindowIncreaseMs: z.number().optional(),
  padZeros: z.boolean().optional(),
  labelingMethodMultiLabel: z
    .object({
      type: z.enum(['end-of-window', 'anywhere-in-window', 'anywhere-in-window-min-percentage', 'majority-in-window']),
      labels: z.array(z.string()).optional(),
      minPercentage: z.number().optional(),
    })
    .optional(),
  imageWidth: z.number().int().optional(),
  imageHeight: z.number().int().optional(),
  resizeMode: z.enum(['squash', 'fit-short', 'fit-long', 'crop']).optional(),
  resizeMethod: z.enum(['lanczos3', 'nearest']).optional(),
  cropAnchor: z.enum(['top-left', 'top-center', 'top-right', 'middle-left', 'middle-center', 'middle-right', 'bottom-left', 'bottom-center', 'bottom-right']).optional(),
  datasetSubset: z.object({ includePercentage: z.number(), seed: z.number().int().optional() }).optional(),
});

const DspBlockRequest = z.object({
  id: blockId,
  type: z.string().min(1),
  name: label.optional(),
  title: label.optional(),
  axes: z.array(z.string().min(1)),
  valuesPerAxis: z.number().int().optional(),
  input: blockId.optional(),
  implementationVersion: z.number().int().optional(),
  namedAxes: z.array(z.object({ name: z.string(), description: z.string().optional(), required: z.boolean().optional(), selectedAxis: z.string().optional() })).optional(),
});

const LearnBlockRequest = z.object({
  id: blockId,
  type: z.enum(LEARN_BLOCK_TYPES),
  name: label.optional(),
  title: label.optional(),
  dsp: z.array(blockId),
  trainingProcessor: z.enum(['cpu', 'gpu']).optional(),
});

const PostProcessingBlockRequest = z.object({
  id: blockId,
  type: z.string().min(1),
  name: label.optional(),
  title: label.optional(),
  implementationVersion: z.number().int().optional(),
});

export const CreateImpulseRequest = z.object({
  name: impulseName.optional(),
  inputBlocks: z.array(InputBlockRequest).max(64),
  dspBlocks: z.array(DspBlockRequest).max(64),
  learnBlocks: z.array(LearnBlockRequest).max(64),
  postProcessingBlocks: z.array(PostProcessingBlockRequest).max(64).optional(),
  type: z.enum(IMPULSE_TYPES).optional(),
});

export const CreateNewEmptyImpulseRequest = z.object({ type: z.enum(IMPULSE_TYPES).optional() });

export const UpdateImpulseRequest = z.object({
  name: impulseName.optional(),
  tags: z.array(z.string()).max(32).optional(),
  type: z.enum(IMPULSE_TYPES).optional(),
});

/** DSPConfigRequest: values are strings; numbers and booleans are taken as their text. */
export const DspConfigRequest = z.object({
  config: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String)),
});
