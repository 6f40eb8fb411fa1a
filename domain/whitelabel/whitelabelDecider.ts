import { LEARN_BLOCK_TYPES } from '../impulse/blockCatalog';
import { unknownTargetFormats } from '../deployment/deploymentTargets';
import type { Decider } from '../shared/decider';
import { ConflictError, NotFoundError, ValidationError, assertNever } from '../shared/errors';
import { checkText } from '../shared/textRules';
import type { WhitelabelEvent, WhitelabelSettings } from './whitelabelEvents';

export const WHITELABEL_NAME_MAX = 128;
/** A DNS host name: labels of letters, digits and inner hyphens, at least two of them. */
const DOMAIN = /^(?=.{4,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export type WhitelabelCommand =
  | { type: 'CreateWhitelabel'; data: { whitelabelId: number; settings: WhitelabelSettings; now: Date } }
  | { type: 'UpdateWhitelabel'; data: { changes: Partial<WhitelabelSettings>; now: Date } }
  | { type: 'DeleteWhitelabel'; data: { now: Date } };

export type WhitelabelState = { status: 'none' } | { status: 'active'; whitelabelId: number; settings: WhitelabelSettings } | { status: 'deleted' };

const unique = (values: readonly string[]) => [...new Set(values)];

/** Checks and normalizes the settings given; the rest are left out. */
export function checkWhitelabelSettings(changes: Partial<WhitelabelSettings>): Partial<WhitelabelSettings> {
  const out: Partial<WhitelabelSettings> = { ...changes };
  if (changes.name !== undefined) {
    const name = changes.name.trim();
    if (name === '' || name.length > WHITELABEL_NAME_MAX) throw new ValidationError(`White label name ("name") must be 1 to ${WHITELABEL_NAME_MAX} characters`);
    out.name = checkText(name, 'White label name ("name")', { max: WHITELABEL_NAME_MAX });
  }
  if (changes.domain !== undefined) {
    const domain = changes.domain.trim().toLowerCase();
    if (!DOMAIN.test(domain)) throw new ValidationError(`"domain": "${changes.domain.slice(0, 64)}" is not a host name (such as studio.example.com)`);
    out.domain = domain;
  }
  if (changes.deploymentTargets !== undefined) {
    const unknown = unknownTargetFormats(changes.deploymentTargets);
    if (unknown.length > 0) throw new ValidationError(`"deploymentTargets": unknown target format(s) ${unknown.map((f) => `"${f.slice(0, 64)}"`).join(', ')} (see GET /api/deployment/targets)`);
    out.deploymentTargets = unique(changes.deploymentTargets);
  }
  if (changes.learningBlocks !== undefined) {
    const unknown = changes.learningBlocks.filter((b) => !(LEARN_BLOCK_TYPES as readonly string[]).includes(b));
    if (unknown.length > 0) throw new ValidationError(`"learningBlocks": unknown learn block type(s) ${unknown.map((b) => `"${b.slice(0, 64)}"`).join(', ')}`);
    out.learningBlocks = unique(changes.learningBlocks);
  }
  if (changes.identityProviders !== undefined) out.identityProviders = unique(changes.identityProviders);
  if (changes.organizationsLimit !== undefined && changes.organizationsLimit !== null && !(Number.isSafeInteger(changes.organizationsLimit) && changes.organizationsLimit >= 0)) {
    throw new ValidationError('"organizationsLimit" must be a whole number, 0 or more, or null');
  }
  return out;
}

export const whitelabelDecider: Decider<WhitelabelCommand, WhitelabelEvent, WhitelabelState> = {
  initialState: () => ({ status: 'none' }),
  decide(command, state) {
    const at = command.data.now.toISOString();
    switch (command.type) {
      case 'CreateWhitelabel': {
        if (state.status !== 'none') throw new ConflictError(`White label ${command.data.whitelabelId} already exists`);
        const settings = { ...command.data.settings, ...checkWhitelabelSettings(command.data.settings) };
        return [{ type: 'WhitelabelCreated', data: { whitelabelId: command.data.whitelabelId, settings, created: at } }];
      }
      case 'UpdateWhitelabel': {
        if (state.status !== 'active') throw new NotFoundError('White label not found', 'WHITELABEL_NOT_FOUND');
        const checked = checkWhitelabelSettings(command.data.changes);
        const changes = Object.fromEntries(
          Object.entries(checked).filter(([key, value]) => value !== undefined && JSON.stringify(value) !== JSON.stringify(state.settings[key as keyof WhitelabelSettings])),
        ) as Partial<WhitelabelSettings>;
        if (Object.keys(changes).length === 0) return [];
        return [{ type: 'WhitelabelUpdated', data: { whitelabelId: state.whitelabelId, changes, updated: at } }];
      }
      case 'DeleteWhitelabel': {
        if (state.status !== 'active') throw new NotFoundError('White label not found', 'WHITELABEL_NOT_FOUND');
        return [{ type: 'WhitelabelDeleted', data: { whitelabelId: state.whitelabelId, deletedDate: at } }];
      }
      default:
        return assertNever(command);
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'WhitelabelCreated':
        return { status: 'active', whitelabelId: event.data.whitelabelId, settings: event.data.settings };
      case 'WhitelabelUpdated':
        return state.status === 'active' ? { ...state, settings: { ...state.settings, ...event.data.changes } } : state;
      case 'WhitelabelDeleted':
        return { status: 'deleted' };
      default:
        return assertNever(event);
    }
  },
};
