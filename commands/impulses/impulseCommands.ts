import type { ImpulseType } from '../../domain/impulse/blockCatalog';
import { DspRunCheckNeeded, type DspConfigValues, type DspRunAnswer } from '../../domain/impulse/dspConfig';
import { ConflictError } from '../../domain/shared/errors';
import type { DspRunChecker } from '../dsp/dspRunCheck';
import { impulseDecider, type ImpulseCommand } from '../../domain/impulse/impulseDecider';
import { impulsesStream } from '../../domain/impulse/impulseEvents';
import type { ImpulseBlocksRequest } from '../../domain/impulse/impulseValidation';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { handleCommand } from '../handleCommand';
import type { IdAllocator } from '../idAllocator';

export interface ImpulseCommandDeps {
  events: EventStore;
  ids: IdAllocator;
}

/** Sends one command to the project's impulses stream; the position is undefined when nothing changed. */
async function send(events: EventStore, projectId: number, command: ImpulseCommand, ctx: CommandContext) {
  const handled = await handleCommand(events, impulsesStream(projectId), impulseDecider, command, ctx);
  return { events: handled.events, position: handled.appended?.position };
}

/**
 * Creates the impulse, or replaces the blocks of `impulseId` (of the default impulse when null and
 * there is one). An id is allocated up front in case it is a creation; unused ids are gaps, never
 * duplicates.
 */
export async function saveImpulse(
  deps: ImpulseCommandDeps,
  input: { projectId: number; impulseId: number | null; name?: string; impulseType?: ImpulseType; blocks: ImpulseBlocksRequest; maxImpulses: number },
  ctx: CommandContext,
): Promise<{ impulseId: number; position: Position | undefined }> {
  const newImpulseId = await deps.ids.next('impulse');
  const { events, position } = await send(deps.events, input.projectId, { type: 'SaveImpulse', data: { ...input, newImpulseId, now: ctx.now } }, ctx);
  const saved = events[0]!;
  if (saved.type !== 'ImpulseCreated' && saved.type !== 'ImpulseBlocksReplaced') throw new Error(`SaveImpulse decided ${saved.type}`);
  return { impulseId: saved.data.impulseId, position };
}

export async function createEmptyImpulse(
  deps: ImpulseCommandDeps,
  input: { projectId: number; impulseType: ImpulseType; maxImpulses: number; impulseId?: number },
  ctx: CommandContext,
): Promise<{ impulseId: number; position: Position | undefined }> {
  // A job allocates the id with its request, so its retry creates the same impulse (see commands/optimize/trialImpulseJob.ts).
  const impulseId = input.impulseId ?? (await deps.ids.next('impulse'));
  const { position } = await send(deps.events, input.projectId, { type: 'CreateEmptyImpulse', data: { ...input, impulseId, now: ctx.now } }, ctx);
  return { impulseId, position };
}

export async function updateImpulse(
  events: EventStore,
  input: { projectId: number; impulseId: number | null; name?: string; tags?: string[]; impulseType?: ImpulseType },
  ctx: CommandContext,
): Promise<Position | undefined> {
  return (await send(events, input.projectId, { type: 'UpdateImpulse', data: { ...input, now: ctx.now } }, ctx)).position;
}

export async function deleteImpulse(events: EventStore, input: { projectId: number; impulseId: number | null }, ctx: CommandContext): Promise<Position | undefined> {
  return (await send(events, input.projectId, { type: 'DeleteImpulse', data: { ...input, now: ctx.now } }, ctx)).position;
}

/** A block id not used in the project and never handed out before. */
export async function issueBlockId(events: EventStore, projectId: number, ctx: CommandContext): Promise<{ blockId: number; position: Position | undefined }> {
  const handled = await send(events, projectId, { type: 'IssueBlockId', data: { projectId, now: ctx.now } }, ctx);
  const issued = handled.events[0]!;
  if (issued.type !== 'BlockIdIssued') throw new Error(`IssueBlockId decided ${issued.type}`);
  return { blockId: issued.data.blockId, position: handled.position };
}

/** Rounds of "the config changed while its check ran" before the caller is told to try again. */
const MAX_CHECK_ROUNDS = 4;

/**
 * Sets the config, after its check by running (dspConfig.ts) made by `runDspCheck` off the event
 * loop: the decider names the check the config it decides on needs, and the command is sent again
 * with its answer. Another round is needed only when the saved config or the impulse changed between
 * the two (each answer is kept for the config it was made for).
 */
export async function setDspConfig(
  deps: { events: EventStore; runDspCheck: DspRunChecker },
  input: { projectId: number; dspId: number; changes: DspConfigValues },
  ctx: CommandContext,
): Promise<Position | undefined> {
  const runAnswers: DspRunAnswer[] = [];
  for (let round = 1; ; round++) {
    try {
      return (await send(deps.events, input.projectId, { type: 'SetDspConfig', data: { ...input, runAnswers, now: ctx.now } }, ctx)).position;
    } catch (error) {
      if (!(error instanceof DspRunCheckNeeded)) throw error;
      if (round >= MAX_CHECK_ROUNDS) throw new ConflictError(`DSP block ${input.dspId}'s config or impulse kept changing while the config was checked; try again`, 'DSP_CONFIG_CHANGING');
      runAnswers.push({ check: error.check, refusals: await deps.runDspCheck(error.check) });
    }
  }
}

export async function clearDspBlock(events: EventStore, input: { projectId: number; dspId: number }, ctx: CommandContext): Promise<Position | undefined> {
  return (await send(events, input.projectId, { type: 'ClearDspBlock', data: { ...input, now: ctx.now } }, ctx)).position;
}
