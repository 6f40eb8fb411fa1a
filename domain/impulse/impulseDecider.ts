import type { Decider } from '../shared/decider';
import { ConflictError, NotFoundError, ValidationError, assertNever } from '../shared/errors';
import { checkId } from '../shared/numberRules';
import { jsonProblem } from '../shared/jsonRules';
import { checkText } from '../shared/textRules';
import { dspBlockDefinition, type ImpulseType } from './blockCatalog';
import { DspRunCheckNeeded, resolveDspConfig, sameDspRunCheck, validateDspConfig, type DspConfigValues, type DspRunAnswer } from './dspConfig';
import type { DspBlock, ImpulseBlocks, ImpulseEvent } from './impulseEvents';
import { buildImpulseBlocks, type ImpulseBlocksRequest } from './impulseValidation';

export const IMPULSE_NAME_MAX = 128;
export const IMPULSE_TAG_MAX = 64;
export const IMPULSE_TAGS_MAX = 32;
/** A DSP parameter's value as text (numbers, lists of numbers, names). */
export const DSP_VALUE_MAX = 65_536;

/** `impulseId: null` means the project's default impulse: its lowest live id. */
export type ImpulseCommand =
  | {
      type: 'SaveImpulse';
      data: {
        projectId: number;
        /** The impulse to replace; null for the default, which is created (as `newImpulseId`) when there is none. */
        impulseId: number | null;
        newImpulseId: number;
        name?: string;
        impulseType?: ImpulseType;
        blocks: ImpulseBlocksRequest;
        maxImpulses: number;
        now: Date;
      };
    }
  | { type: 'CreateEmptyImpulse'; data: { projectId: number; impulseId: number; impulseType: ImpulseType; maxImpulses: number; now: Date } }
  | { type: 'UpdateImpulse'; data: { projectId: number; impulseId: number | null; name?: string; tags?: string[]; impulseType?: ImpulseType; now: Date } }
  | { type: 'DeleteImpulse'; data: { projectId: number; impulseId: number | null; now: Date } }
  | { type: 'IssueBlockId'; data: { projectId: number; now: Date } }
  | {
      type: 'SetDspConfig';
      data: {
        projectId: number;
        dspId: number;
        changes: DspConfigValues;
        /**
         * Checks by running already made (in the DSP pool): when the config this decides on needs one
         * that is not here, the decider throws DspRunCheckNeeded and the handler comes back with it.
         */
        runAnswers?: readonly DspRunAnswer[];
        now: Date;
      };
    }
  | { type: 'ClearDspBlock'; data: { projectId: number; dspId: number; now: Date } }
  /**
   * A version's impulses replace the project's (a restore): every live impulse is deleted and these
   * are created under the ids the restore allocated, block ids included (all above the project's
   * highest, so none is reissued), with their tags and saved DSP configs.
   */
  | { type: 'RestoreImpulses'; data: { projectId: number; impulses: readonly RestoredImpulse[]; maxImpulses: number; now: Date } };

export interface RestoredImpulse {
  impulseId: number;
  name: string;
  type: ImpulseType;
  tags: readonly string[];
  blocks: ImpulseBlocks;
  dspConfigs: readonly [number, DspConfigValues][];
}

export interface ImpulseState {
  id: number;
  name: string;
  type: ImpulseType;
  blocks: ImpulseBlocks;
  dspConfigs: ReadonlyMap<number, DspConfigValues>;
}

export interface ImpulsesState {
  /** Live impulses by id. */
  impulses: ReadonlyMap<number, ImpulseState>;
  /** The highest block id ever used or issued in the project: new ids start above it, so none is reissued. */
  highestBlockId: number;
  /** For default names ("Impulse #3"), deleted ones included. */
  impulsesCreated: number;
}

const blockIdsOf = (blocks: ImpulseBlocks): number[] =>
  [...blocks.inputBlocks, ...blocks.dspBlocks, ...blocks.learnBlocks, ...blocks.postProcessingBlocks].map((b) => b.id);

export const defaultImpulseId = (state: ImpulsesState): number | undefined => (state.impulses.size === 0 ? undefined : Math.min(...state.impulses.keys()));

function requireImpulse(state: ImpulsesState, impulseId: number | null): ImpulseState {
  const id = impulseId ?? defaultImpulseId(state);
  const impulse = id === undefined ? undefined : state.impulses.get(id);
  if (!impulse) throw new NotFoundError(impulseId === null ? 'This project has no impulse yet' : `Impulse ${impulseId} not found`, 'IMPULSE_NOT_FOUND');
  return impulse;
}

function requireDspBlock(state: ImpulsesState, dspId: number): { impulse: ImpulseState; block: DspBlock } {
  for (const impulse of state.impulses.values()) {
    const block = impulse.blocks.dspBlocks.find((b) => b.id === dspId);
    if (block) return { impulse, block };
  }
  throw new NotFoundError(`DSP block ${dspId} not found in this project's impulses`, 'DSP_BLOCK_NOT_FOUND');
}

function checkedName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw new ValidationError('Invalid impulse: "name" must not be empty');
  if (trimmed.length > IMPULSE_NAME_MAX) throw new ValidationError(`Invalid impulse: "name" must be at most ${IMPULSE_NAME_MAX} characters`);
  return checkText(trimmed, 'Invalid impulse: "name"', { max: IMPULSE_NAME_MAX });
}

function checkedTags(tags: string[]): string[] {
  const trimmed = [...new Set(tags.map((t) => t.trim()))];
  for (const tag of trimmed) {
    if (tag === '' || tag.length > IMPULSE_TAG_MAX) throw new ValidationError(`Invalid impulse: "tags" must be non-empty strings of at most ${IMPULSE_TAG_MAX} characters`);
    checkText(tag, 'Invalid impulse: "tags"', { max: IMPULSE_TAG_MAX });
  }
  if (trimmed.length > IMPULSE_TAGS_MAX) throw new ValidationError(`Invalid impulse: "tags": at most ${IMPULSE_TAGS_MAX} tags`);
  return trimmed;
}

function checkRoomFor(state: ImpulsesState, maxImpulses: number): void {
  if (state.impulses.size >= maxImpulses) {
    throw new ValidationError(`This project already has ${state.impulses.size} impulses, the most its plan allows (${maxImpulses}); delete one first`, 'TOO_MANY_IMPULSES');
  }
}

function otherImpulsesBlockIds(state: ImpulsesState, exceptImpulseId: number | undefined): Set<number> {
  return new Set([...state.impulses.values()].filter((i) => i.id !== exceptImpulseId).flatMap((i) => blockIdsOf(i.blocks)));
}

function restoreImpulses(c: Extract<ImpulseCommand, { type: 'RestoreImpulses' }>['data'], state: ImpulsesState): ImpulseEvent[] {
  // A retried restore: its impulses are already here.
  if (c.impulses.some((i) => state.impulses.has(i.impulseId))) return [];
  if (c.impulses.length > c.maxImpulses) throw new ValidationError(`The version has ${c.impulses.length} impulses; this project's plan allows ${c.maxImpulses}`, 'TOO_MANY_IMPULSES');
  const at = c.now.toISOString();
  const events: ImpulseEvent[] = [...state.impulses.keys()].map((impulseId) => ({ type: 'ImpulseDeleted', data: { projectId: c.projectId, impulseId, deleted: at } }));
  const restoredIds = c.impulses.flatMap((i) => blockIdsOf(i.blocks));
  const taken = restoredIds.filter((id) => id <= state.highestBlockId);
  if (taken.length > 0) throw new ConflictError(`Block id ${taken[0]} was given in this project since the restore began: run the restore again`, 'BLOCK_IDS_TAKEN');
  c.impulses.forEach((impulse, n) => {
    const others = new Set(c.impulses.filter((_, m) => m !== n).flatMap((i) => blockIdsOf(i.blocks)));
    const blocks = buildImpulseBlocks(impulse.blocks, { usedElsewhere: others, previous: impulse.blocks, now: c.now });
    events.push({ type: 'ImpulseCreated', data: { projectId: c.projectId, impulseId: checkId(impulse.impulseId, 'impulseId'), name: checkedName(impulse.name), type: impulse.type, ...blocks, created: at } });
    if (impulse.tags.length > 0) events.push({ type: 'ImpulseUpdated', data: { projectId: c.projectId, impulseId: impulse.impulseId, tags: checkedTags([...impulse.tags]), updated: at } });
    for (const [dspId, config] of impulse.dspConfigs) {
      if (!blocks.dspBlocks.some((b) => b.id === dspId)) throw new ValidationError(`Invalid impulse: a DSP config names block ${dspId}, which impulse ${impulse.impulseId} does not have`);
      const problem = jsonProblem(config, '"config"', { text: { max: DSP_VALUE_MAX, allowEmpty: true }, key: { max: 256 }, maxDepth: 1, maxChars: 4 * DSP_VALUE_MAX });
      if (problem !== undefined) throw new ValidationError(`Invalid DSP config for block ${dspId}: ${problem}`);
      events.push({ type: 'DspConfigSet', data: { projectId: c.projectId, impulseId: impulse.impulseId, dspId, config, set: at } });
    }
  });
  return events;
}

export const impulseDecider: Decider<ImpulseCommand, ImpulseEvent, ImpulsesState> = {
  initialState: () => ({ impulses: new Map(), highestBlockId: 0, impulsesCreated: 0 }),

  decide(command, state) {
    switch (command.type) {
      case 'SaveImpulse': {
        const c = command.data;
        const existing = c.impulseId === null ? (defaultImpulseId(state) === undefined ? undefined : requireImpulse(state, null)) : requireImpulse(state, c.impulseId);
        if (!existing) {
          checkRoomFor(state, c.maxImpulses);
          const blocks = buildImpulseBlocks(c.blocks, { usedElsewhere: otherImpulsesBlockIds(state, undefined), now: c.now });
          const name = checkedName(c.name ?? `Impulse #${state.impulsesCreated + 1}`);
          return [{ type: 'ImpulseCreated', data: { projectId: c.projectId, impulseId: c.newImpulseId, name, type: c.impulseType ?? 'default', ...blocks, created: c.now.toISOString() } }];
        }
        const blocks = buildImpulseBlocks(c.blocks, { usedElsewhere: otherImpulsesBlockIds(state, existing.id), previous: existing.blocks, now: c.now });
        // A saved config stays with its block only while the block keeps its type and version.
        const clearedDspIds = existing.blocks.dspBlocks
          .filter((old) => existing.dspConfigs.has(old.id))
          .filter((old) => !blocks.dspBlocks.some((b) => b.id === old.id && b.type === old.type && b.implementationVersion === old.implementationVersion))
          .map((old) => old.id);
        return [
          {
            type: 'ImpulseBlocksReplaced',
            data: {
              projectId: c.projectId,
              impulseId: existing.id,
              name: c.name === undefined ? existing.name : checkedName(c.name),
              type: c.impulseType ?? existing.type,
              ...blocks,
              clearedDspIds,
              replaced: c.now.toISOString(),
            },
          },
        ];
      }
      case 'CreateEmptyImpulse': {
        const c = command.data;
        checkRoomFor(state, c.maxImpulses);
        const empty: ImpulseBlocks = { inputBlocks: [], dspBlocks: [], learnBlocks: [], postProcessingBlocks: [] };
        return [{ type: 'ImpulseCreated', data: { projectId: c.projectId, impulseId: c.impulseId, name: `Impulse #${state.impulsesCreated + 1}`, type: c.impulseType, ...empty, created: c.now.toISOString() } }];
      }
      case 'UpdateImpulse': {
        const c = command.data;
        const impulse = requireImpulse(state, c.impulseId);
        const changes = {
          ...(c.name === undefined ? {} : { name: checkedName(c.name) }),
          ...(c.tags === undefined ? {} : { tags: checkedTags(c.tags) }),
          ...(c.impulseType === undefined ? {} : { type: c.impulseType }),
        };
        if (Object.keys(changes).length === 0) return [];
        return [{ type: 'ImpulseUpdated', data: { projectId: c.projectId, impulseId: impulse.id, ...changes, updated: c.now.toISOString() } }];
      }
      case 'DeleteImpulse': {
        const c = command.data;
        const impulse = requireImpulse(state, c.impulseId);
        return [{ type: 'ImpulseDeleted', data: { projectId: c.projectId, impulseId: impulse.id, deleted: c.now.toISOString() } }];
      }
      case 'IssueBlockId': {
        const c = command.data;
        return [{ type: 'BlockIdIssued', data: { projectId: c.projectId, blockId: state.highestBlockId + 1, issued: c.now.toISOString() } }];
      }
      case 'SetDspConfig': {
        const c = command.data;
        const { impulse, block } = requireDspBlock(state, c.dspId);
        const def = dspBlockDefinition(block.type)!;
        const config = resolveDspConfig(def, impulse.dspConfigs.get(block.id) ?? null, c.changes);
        const input = impulse.blocks.inputBlocks.find((b) => b.id === block.input);
        const errors = validateDspConfig(def, config, {
          implementationVersion: block.implementationVersion,
          ...(input?.frequencyHz === undefined ? {} : { frequencyHz: input.frequencyHz }),
          ...(input?.windowSizeMs === undefined ? {} : { windowSizeMs: input.windowSizeMs }),
          runRefusals: (check) => {
            const answer = c.runAnswers?.find((a) => sameDspRunCheck(a.check, check));
            if (!answer) throw new DspRunCheckNeeded(check);
            return answer.refusals;
          },
        });
        if (errors.length > 0) throw new ValidationError(`Invalid DSP config for block ${block.id} (${block.type}): ${errors.join('; ')}`);
        const textProblem = jsonProblem(config, '"config"', { text: { max: DSP_VALUE_MAX, allowEmpty: true }, key: { max: 256 }, maxDepth: 1, maxChars: 4 * DSP_VALUE_MAX });
        if (textProblem !== undefined) throw new ValidationError(`Invalid DSP config for block ${block.id} (${block.type}): ${textProblem}`);
        return [{ type: 'DspConfigSet', data: { projectId: c.projectId, impulseId: impulse.id, dspId: block.id, config, set: c.now.toISOString() } }];
      }
      case 'RestoreImpulses':
        return restoreImpulses(command.data, state);
      case 'ClearDspBlock': {
        const c = command.data;
        const { impulse, block } = requireDspBlock(state, c.dspId);
        return [{ type: 'DspBlockCleared', data: { projectId: c.projectId, impulseId: impulse.id, dspId: block.id, cleared: c.now.toISOString() } }];
      }
      default:
        return assertNever(command);
    }
  },

  evolve(state, event) {
    const withImpulse = (id: number, change: (i: ImpulseState) => ImpulseState): ImpulsesState => {
      const impulse = state.impulses.get(id);
      return impulse ? { ...state, impulses: new Map(state.impulses).set(id, change(impulse)) } : state;
    };
    const highest = (blocks: ImpulseBlocks) => Math.max(state.highestBlockId, ...blockIdsOf(blocks));
    switch (event.type) {
      case 'ImpulseCreated': {
        const d = event.data;
        const impulse: ImpulseState = { id: d.impulseId, name: d.name, type: d.type, blocks: blocksOf(d), dspConfigs: new Map() };
        return { impulses: new Map(state.impulses).set(d.impulseId, impulse), highestBlockId: highest(d), impulsesCreated: state.impulsesCreated + 1 };
      }
      case 'ImpulseBlocksReplaced': {
        const d = event.data;
        const next = withImpulse(d.impulseId, (i) => {
          const dspConfigs = new Map(i.dspConfigs);
          for (const id of d.clearedDspIds) dspConfigs.delete(id);
          return { ...i, name: d.name, type: d.type, blocks: blocksOf(d), dspConfigs };
        });
        return { ...next, highestBlockId: highest(d) };
      }
      case 'ImpulseUpdated': {
        const d = event.data;
        return withImpulse(d.impulseId, (i) => ({ ...i, name: d.name ?? i.name, type: d.type ?? i.type }));
      }
      case 'ImpulseDeleted': {
        const impulses = new Map(state.impulses);
        impulses.delete(event.data.impulseId);
        return { ...state, impulses };
      }
      case 'BlockIdIssued':
        return { ...state, highestBlockId: Math.max(state.highestBlockId, event.data.blockId) };
      case 'DspConfigSet': {
        const d = event.data;
        return withImpulse(d.impulseId, (i) => ({ ...i, dspConfigs: new Map(i.dspConfigs).set(d.dspId, d.config) }));
      }
      case 'DspBlockCleared': {
        const d = event.data;
        return withImpulse(d.impulseId, (i) => {
          const dspConfigs = new Map(i.dspConfigs);
          dspConfigs.delete(d.dspId);
          return { ...i, dspConfigs };
        });
      }
      default:
        return assertNever(event);
    }
  },
};

const blocksOf = (d: ImpulseBlocks): ImpulseBlocks => ({
  inputBlocks: d.inputBlocks,
  dspBlocks: d.dspBlocks,
  learnBlocks: d.learnBlocks,
  postProcessingBlocks: d.postProcessingBlocks,
});
