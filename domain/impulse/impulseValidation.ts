// An impulse is checked as a whole: each block against the catalog, and the blocks against each
// other (ids, the input of each DSP block, the DSP blocks of each learn block). Errors name the
// block and the field, so a client can fix the one thing that is wrong.
import { ValidationError } from '../shared/errors';
import { jsonProblem, type JsonRule } from '../shared/jsonRules';
import { MAX_FREQUENCY_HZ } from '../sample/sampleLimits';
import { dspBlockDefinition, inputBlockInfo, learnBlockInfo, postProcessingBlockInfo, type InputBlockType, type LearnBlockType } from './blockCatalog';
import type { DspBlock, ImpulseBlocks, InputBlock, LearnBlock, PostProcessingBlock } from './impulseEvents';

type Requested<B extends { createdAt: string }, Optional extends keyof B> = Omit<B, 'createdAt' | Optional> & Partial<Pick<B, Optional>>;

/** Blocks as a client sends them: titles, names, DSP inputs and versions may be left out. */
export interface ImpulseBlocksRequest {
  inputBlocks: Requested<InputBlock, 'name' | 'title'>[];
  dspBlocks: Requested<DspBlock, 'name' | 'title' | 'input' | 'implementationVersion'>[];
  learnBlocks: Requested<LearnBlock, 'name' | 'title'>[];
  postProcessingBlocks: Requested<PostProcessingBlock, 'name' | 'title' | 'implementationVersion'>[];
}

export const MAX_IMAGE_SIDE = 2048;
/** A day: longer windows are a unit mistake (seconds for milliseconds), not a use case. */
export const MAX_WINDOW_MS = 24 * 3600 * 1000;

export interface ImpulseBlockContext {
  /** Ids of blocks in the project's other live impulses. */
  usedElsewhere: ReadonlySet<number>;
  /** The impulse's blocks before this change, whose creation times are kept. */
  previous?: ImpulseBlocks;
  now: Date;
}

const invalid = (where: string, message: string) => new ValidationError(`Invalid impulse: ${where}: ${message}`);

/**
 * Every string of a block (name, title, axes, labels, descriptions) on one line and bounded, every
 * number finite: the blocks are stored as the client sends them, so this is all that stands
 * between a request and the read models.
 */
const BLOCK_JSON_RULE: JsonRule = { text: { max: 1024, allowEmpty: true }, key: { max: 256 }, maxDepth: 4, maxChars: 1_000_000 };
export const BLOCK_TITLE_MAX = 256;

function checkBlockValues(where: string, block: { name?: string; title?: string }): void {
  const problem = jsonProblem(block, 'the block', BLOCK_JSON_RULE);
  if (problem !== undefined) throw invalid(where, problem);
  for (const field of ['name', 'title'] as const) {
    const value = block[field];
    if (value !== undefined && (value.trim() === '' || value.length > BLOCK_TITLE_MAX)) throw invalid(where, `"${field}" must be 1 to ${BLOCK_TITLE_MAX} characters`);
  }
}
const positive = (n: number | undefined): boolean => n !== undefined && Number.isFinite(n) && n > 0;

/** Checks the requested blocks and answers them as stored; throws a ValidationError naming the block and field. */
export function buildImpulseBlocks(request: ImpulseBlocksRequest, context: ImpulseBlockContext): ImpulseBlocks {
  const created = context.now.toISOString();
  const previous = new Map<number, { type: string; createdAt: string }>(
    context.previous ? [...context.previous.inputBlocks, ...context.previous.dspBlocks, ...context.previous.learnBlocks, ...context.previous.postProcessingBlocks].map((b) => [b.id, b]) : [],
  );
  const createdAt = (id: number, type: string) => (previous.get(id)?.type === type ? previous.get(id)!.createdAt : created);

  const seen = new Set<number>();
  const checkId = (where: string, id: number) => {
    if (!Number.isSafeInteger(id) || id < 1) throw invalid(where, `"id" must be a positive integer, got ${id}`);
    if (seen.has(id)) throw invalid(where, `"id" ${id} is used by another block of this impulse`);
    if (context.usedElsewhere.has(id)) throw invalid(where, `"id" ${id} is used by a block of another impulse of this project; ask for a new one with get-new-block-id`);
    seen.add(id);
  };

  const inputBlocks = request.inputBlocks.map((b): InputBlock => {
    const where = `input block ${b.id} (${b.type})`;
    checkId(where, b.id);
    checkBlockValues(where, b);
    const info = inputBlockInfo(b.type);
    if (!info) throw invalid(where, `"type" must be one of time-series, image, features`);
    checkInputBlock(where, b);
    return { ...b, name: b.name ?? info.name, title: b.title ?? info.title, createdAt: createdAt(b.id, b.type) };
  });
  const inputTypes = new Map<number, InputBlockType>(inputBlocks.map((b) => [b.id, b.type]));

  const dspBlocks = request.dspBlocks.map((b): DspBlock => {
    const where = `DSP block ${b.id} (${b.type})`;
    checkId(where, b.id);
    checkBlockValues(where, b);
    const def = dspBlockDefinition(b.type);
    if (!def) throw invalid(where, `"type" is not a known processing block`);
    let input = b.input;
    if (input === undefined) {
      // Older clients leave `input` out: it can only mean the impulse's one input block.
      if (inputBlocks.length !== 1) throw invalid(where, `"input" is required when the impulse has ${inputBlocks.length} input blocks`);
      input = inputBlocks[0]!.id;
    }
    const inputType = inputTypes.get(input);
    if (inputType === undefined) throw invalid(where, `"input" refers to block ${input}, which is not an input block of this impulse`);
    if (!def.inputTypes.includes(inputType)) throw invalid(where, `"input" is a ${inputType} block; this block processes ${def.inputTypes.join(' or ')} data`);
    if (inputType === 'time-series') {
      if (b.axes.length === 0) throw invalid(where, `"axes" must name at least one axis of the input`);
      if (def.singleAxis && b.axes.length !== 1) throw invalid(where, `"axes" must name exactly one axis (this block processes a single signal), got ${b.axes.length}`);
    }
    if (new Set(b.axes).size !== b.axes.length) throw invalid(where, `"axes" must not repeat an axis`);
    const latest = def.info.latestImplementationVersion;
    const version = b.implementationVersion ?? latest;
    if (!Number.isInteger(version) || version < 1 || version > latest) throw invalid(where, `"implementationVersion" must be from 1 to ${latest}, got ${version}`);
    return { ...b, input, implementationVersion: version, name: b.name ?? def.info.name, title: b.title ?? def.info.title, createdAt: createdAt(b.id, b.type) };
  });
  const dspIds = new Set(dspBlocks.map((b) => b.id));

  const learnBlocks = request.learnBlocks.map((b): LearnBlock => {
    const where = `learn block ${b.id} (${b.type})`;
    checkId(where, b.id);
    checkBlockValues(where, b);
    const info = learnBlockInfo(b.type);
    if (!info) throw invalid(where, `"type" is not a known learning block`);
    if (b.dsp.length === 0) throw invalid(where, `"dsp" must name at least one DSP block of this impulse`);
    for (const id of b.dsp) if (!dspIds.has(id)) throw invalid(where, `"dsp" refers to block ${id}, which is not a DSP block of this impulse`);
    if (new Set(b.dsp).size !== b.dsp.length) throw invalid(where, `"dsp" must not repeat a block`);
    return { ...b, type: b.type as LearnBlockType, name: b.name ?? info.name, title: b.title ?? info.title, createdAt: createdAt(b.id, b.type) };
  });

  const postProcessingBlocks = request.postProcessingBlocks.map((b): PostProcessingBlock => {
    const where = `post-processing block ${b.id} (${b.type})`;
    checkId(where, b.id);
    checkBlockValues(where, b);
    const info = postProcessingBlockInfo(b.type);
    if (!info) throw invalid(where, `"type" is not a known post-processing block`);
    const version = b.implementationVersion ?? info.latestImplementationVersion;
    if (!Number.isInteger(version) || version < 1 || version > info.latestImplementationVersion) {
      throw invalid(where, `"implementationVersion" must be from 1 to ${info.latestImplementationVersion}, got ${version}`);
    }
    return { ...b, implementationVersion: version, name: b.name ?? info.name, title: b.title ?? info.title, createdAt: createdAt(b.id, b.type) };
  });

  return { inputBlocks, dspBlocks, learnBlocks, postProcessingBlocks };
}

function checkInputBlock(where: string, b: ImpulseBlocksRequest['inputBlocks'][number]): void {
  if (b.type === 'time-series') {
    if (!positive(b.windowSizeMs) || b.windowSizeMs! > MAX_WINDOW_MS) throw invalid(where, `"windowSizeMs" must be above 0 and at most ${MAX_WINDOW_MS}, got ${b.windowSizeMs}`);
    if (!positive(b.windowIncreaseMs)) throw invalid(where, `"windowIncreaseMs" must be above 0, got ${b.windowIncreaseMs}`);
    // A larger increase would skip data between windows.
    if (b.windowIncreaseMs! > b.windowSizeMs!) throw invalid(where, `"windowIncreaseMs" must be at most "windowSizeMs" (${b.windowSizeMs}), got ${b.windowIncreaseMs}`);
    if (b.frequencyHz !== undefined && (!positive(b.frequencyHz) || b.frequencyHz > MAX_FREQUENCY_HZ)) {
      throw invalid(where, `"frequencyHz" must be above 0 and at most ${MAX_FREQUENCY_HZ}, got ${b.frequencyHz}`);
    }
    if (b.classificationWindowIncreaseMs !== undefined && (!positive(b.classificationWindowIncreaseMs) || b.classificationWindowIncreaseMs > MAX_WINDOW_MS)) {
      throw invalid(where, `"classificationWindowIncreaseMs" must be above 0 and at most ${MAX_WINDOW_MS}, got ${b.classificationWindowIncreaseMs}`);
    }
    const minPercentage = b.labelingMethodMultiLabel?.minPercentage;
    if (minPercentage !== undefined && !(minPercentage >= 0 && minPercentage <= 100)) throw invalid(where, `"labelingMethodMultiLabel.minPercentage" must be from 0 to 100, got ${minPercentage}`);
  }
  if (b.type === 'image') {
    for (const field of ['imageWidth', 'imageHeight'] as const) {
      const v = b[field];
      if (v === undefined || !Number.isInteger(v) || v < 1 || v > MAX_IMAGE_SIDE) throw invalid(where, `"${field}" must be an integer from 1 to ${MAX_IMAGE_SIDE}, got ${v}`);
    }
  }
  const subset = b.datasetSubset;
  if (subset && !(subset.includePercentage > 0 && subset.includePercentage <= 100)) throw invalid(where, `"datasetSubset.includePercentage" must be above 0 and at most 100, got ${subset.includePercentage}`);
}
