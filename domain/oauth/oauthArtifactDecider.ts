import type { Decider } from '../shared/decider';
import { ConflictError, NotFoundError, ValidationError, assertNever } from '../shared/errors';
import { checkDate, checkNumber } from '../shared/numberRules';
import { OAUTH_ARTIFACT_KINDS, OAUTH_GRANT_END_CAUSES, type OAuthArtifactEvent, type OAuthArtifactKind, type OAuthGrantEndCause } from './oauthArtifactEvents';

/** oidc-provider reads request bodies of at most 56 KiB; an artifact is never near this. */
export const MAX_ARTIFACT_PAYLOAD_CHARS = 64 * 1024;
const MAX_LIFETIME_SECONDS = 10 * 365 * 24 * 3600;

export type OAuthArtifactCommand =
  | { type: 'SaveOAuthArtifact'; data: { kind: OAuthArtifactKind; payload: Record<string, unknown>; expiresInSeconds: number; now: Date } }
  | { type: 'ConsumeOAuthArtifact'; data: { kind: OAuthArtifactKind; now: Date } }
  | { type: 'EndOAuthArtifact'; data: { kind: OAuthArtifactKind; reason: 'destroyed' | 'revoked'; cause?: OAuthGrantEndCause; now: Date } };

export type OAuthArtifactState =
  | { status: 'none' }
  | { status: 'saved'; payload: Record<string, unknown>; expires: string; consumed: string | null }
  | { status: 'ended' };

function checkKind(kind: OAuthArtifactKind): OAuthArtifactKind {
  if (!OAUTH_ARTIFACT_KINDS.includes(kind)) throw new ValidationError(`OAuth artifact kind must be one of ${OAUTH_ARTIFACT_KINDS.join(', ')}`);
  return kind;
}

/** Plain JSON, the same once written and read back: no NaN, no Date, no class instances. */
function isJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJson);
  if (typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return (proto === Object.prototype || proto === null) && Object.values(value).every(isJson);
}

function checkPayload(payload: Record<string, unknown>): Record<string, unknown> {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload) || !isJson(payload)) {
    throw new ValidationError('An OAuth artifact payload must be a plain JSON object');
  }
  // The id is the secret its holder presents; the adapter strips it and puts it back on reading.
  if (Object.hasOwn(payload, 'jti')) throw new ValidationError('An OAuth artifact payload must not hold its id (jti)');
  const chars = JSON.stringify(payload).length;
  if (chars > MAX_ARTIFACT_PAYLOAD_CHARS) throw new ValidationError(`An OAuth artifact payload is ${chars} characters of JSON; at most ${MAX_ARTIFACT_PAYLOAD_CHARS} are kept`);
  return structuredClone(payload);
}

const notFound = (kind: OAuthArtifactKind) => new NotFoundError(`OAuth ${kind} not found`, 'OAUTH_ARTIFACT_NOT_FOUND');

export const oauthArtifactDecider: Decider<OAuthArtifactCommand, OAuthArtifactEvent, OAuthArtifactState> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    switch (command.type) {
      case 'SaveOAuthArtifact': {
        const c = command.data;
        const kind = checkKind(c.kind);
        // An ended artifact is never revived: its tokens were told it is gone.
        if (state.status === 'ended') throw new ConflictError(`OAuth ${kind} has ended`, 'OAUTH_ARTIFACT_ENDED');
        const seconds = checkNumber(c.expiresInSeconds, 'expiresInSeconds', { min: 1, max: MAX_LIFETIME_SECONDS });
        checkDate(c.now, 'now');
        const expires = checkDate(new Date(c.now.getTime() + seconds * 1000), 'expires');
        return [{ type: 'OAuthArtifactSaved', data: { kind, payload: checkPayload(c.payload), expires } }];
      }
      case 'ConsumeOAuthArtifact': {
        const kind = checkKind(command.data.kind);
        if (state.status !== 'saved') throw notFound(kind);
        if (state.consumed !== null) throw new ConflictError(`OAuth ${kind} already consumed`, 'OAUTH_ARTIFACT_CONSUMED');
        return [{ type: 'OAuthArtifactConsumed', data: { kind, consumed: checkDate(command.data.now, 'now') } }];
      }
      case 'EndOAuthArtifact': {
        const c = command.data;
        const kind = checkKind(c.kind);
        if (c.reason !== 'destroyed' && c.reason !== 'revoked') throw new ValidationError('An OAuth artifact ends destroyed or revoked');
        if (c.cause !== undefined && (kind !== 'Grant' || c.reason !== 'revoked' || !OAUTH_GRANT_END_CAUSES.includes(c.cause))) {
          throw new ValidationError(`Only a revoked grant has a cause, one of ${OAUTH_GRANT_END_CAUSES.join(', ')}`);
        }
        if (state.status !== 'saved') return [];
        const ended = checkDate(c.now, 'now');
        return [{ type: 'OAuthArtifactEnded', data: c.cause === undefined ? { kind, reason: c.reason, ended } : { kind, reason: c.reason, cause: c.cause, ended } }];
      }
      default:
        return assertNever(command);
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'OAuthArtifactSaved':
        return { status: 'saved', payload: event.data.payload, expires: event.data.expires, consumed: state.status === 'saved' ? state.consumed : null };
      case 'OAuthArtifactConsumed':
        return state.status === 'saved' ? { ...state, consumed: event.data.consumed } : state;
      case 'OAuthArtifactEnded':
        return { status: 'ended' };
      default:
        return assertNever(event);
    }
  },
};
