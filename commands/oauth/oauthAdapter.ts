// oidc-provider's persistence (its `Adapter` interface) on our log: docs/oauth.md, "Persistence".
// Every write is a command on the artifact's own stream; every find reads that stream, so a code
// issued by one API process is found by another at once. Ids of codes, tokens and sessions are
// what their holders present: streams are named after their SHA-256 and payloads lose `jti`.
import { createHash } from 'node:crypto';
import { oauthArtifactDecider, type OAuthArtifactCommand, type OAuthArtifactState } from '../../domain/oauth/oauthArtifactDecider';
import { OAUTH_ARTIFACT_KINDS, oauthArtifactStream, type OAuthArtifactKind } from '../../domain/oauth/oauthArtifactEvents';
import { ConflictError } from '../../domain/shared/errors';
import type { OAuthClientDocument } from '../../projections/oauthClients/oauthClientDocument';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { aggregateStream } from '../aggregateStream';
import { systemContext } from '../commandContext';
import { handleCommand } from '../handleCommand';

export type AdapterPayload = Record<string, unknown>;

/** The shape oidc-provider calls (`new Adapter(modelName)`), declared here: the package ships no types. */
export interface OidcAdapter {
  upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void>;
  find(id: string): Promise<AdapterPayload | undefined>;
  findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
  findByUid(uid: string): Promise<AdapterPayload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

export interface OAuthAdapterDeps {
  events: EventStore;
  clients: { live(clientId: string): Promise<OAuthClientDocument | null> };
  /** The error oidc-provider answers `invalid_grant` with (its `errors.InvalidGrant`), for a code or refresh token used twice. */
  invalidGrant(description: string): Error;
  /**
   * The user's current `sessionVersion` (it moves on at a password change or reset), null for a
   * user who is gone. A grant keeps the one it was saved under and ends when it no longer matches.
   */
  sessionVersion(accountId: string): Promise<number | null>;
  now?(): Date;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const hashId = (id: string): string => createHash('sha256').update(id, 'utf8').digest('base64url');
const TOKEN_KINDS: ReadonlySet<OAuthArtifactKind> = new Set(['AuthorizationCode', 'AccessToken', 'RefreshToken']);
const isArtifactKind = (name: string): name is OAuthArtifactKind => (OAUTH_ARTIFACT_KINDS as readonly string[]).includes(name);
// A session is also pointed at by its uid, which oidc-provider looks it up by (`findByUid`).
const sessionByUid = (uid: string) => oauthArtifactStream('Session', `uid-${hashId(uid)}`);

/** The adapter class to give oidc-provider's `adapter` setting. */
export function oauthAdapter(deps: OAuthAdapterDeps): new (name: string) => OidcAdapter {
  const now = deps.now ?? (() => new Date());

  async function load(stream: string): Promise<OAuthArtifactState> {
    return (await aggregateStream(deps.events, stream, oauthArtifactDecider)).state;
  }
  const live = (state: OAuthArtifactState, at: Date): state is Extract<OAuthArtifactState, { status: 'saved' }> =>
    state.status === 'saved' && Date.parse(state.expires) > at.getTime();

  async function run(stream: string, command: OAuthArtifactCommand, actor?: string): Promise<void> {
    const ctx = systemContext('oauth', now());
    await handleCommand(deps.events, stream, oauthArtifactDecider, command, actor === undefined ? ctx : { ...ctx, actor });
  }

  // Who the history names: the person for their grant (their consent), the application for the
  // tokens it is issued; the authorization server itself for the rest.
  function actorOfSave(kind: OAuthArtifactKind, payload: AdapterPayload): string | undefined {
    if (kind === 'Grant' && typeof payload.accountId === 'string' && /^[1-9][0-9]{0,14}$/.test(payload.accountId)) return `user:${payload.accountId}`;
    if (TOKEN_KINDS.has(kind) && typeof payload.clientId === 'string' && /^[A-Za-z0-9_-]{16,64}$/.test(payload.clientId)) return `oauth:${payload.clientId}`;
    return undefined;
  }

  async function grantLive(grantId: unknown, at: Date): Promise<boolean> {
    if (typeof grantId !== 'string') return false;
    const grant = await load(oauthArtifactStream('Grant', hashId(grantId)));
    return live(grant, at) && (await grantSessionHolds(grant.payload));
  }

  // A password change or reset, or the account's deletion, ends every grant of the user at once.
  async function grantSessionHolds(payload: AdapterPayload): Promise<boolean> {
    if (typeof payload.accountId !== 'string') return false;
    const current = await deps.sessionVersion(payload.accountId);
    return current !== null && payload.sessionVersion === current;
  }

  class ClientAdapter implements OidcAdapter {
    async find(clientId: string): Promise<AdapterPayload | undefined> {
      const client = await deps.clients.live(clientId);
      if (!client) return undefined;
      return {
        client_id: client.clientId,
        // Only the hash: the provider's compareClientSecret is replaced to hash what is presented.
        client_secret: client.secretHash,
        client_name: client.name,
        redirect_uris: [...client.redirectUris],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      };
    }
    upsert(): Promise<void> {
      return Promise.reject(new Error('OAuth clients are registered through /api/oauth/clients only'));
    }
    findByUserCode = unsupported;
    findByUid = unsupported;
    consume = unsupported;
    destroy = unsupported;
    revokeByGrantId = unsupported;
  }

  class ArtifactAdapter implements OidcAdapter {
    constructor(private readonly kind: OAuthArtifactKind) {}

    private stream(id: string): string {
      return oauthArtifactStream(this.kind, hashId(id));
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const { jti: _jti, ...rest } = payload;
      const kept: AdapterPayload = withoutUndefined(rest);
      // An application may name the person in `login_hint` (often an e-mail address): personal data
      // the log would keep after the person is forgotten, and nothing our pages use.
      if (this.kind === 'Interaction' && isPlainObject(kept.params) && 'login_hint' in kept.params) {
        const { login_hint: _hint, ...params } = kept.params;
        kept.params = params;
      }
      // oidc-provider keeps only the fields it knows: the session version is ours, added at each save.
      if (this.kind === 'Grant') kept.sessionVersion = typeof kept.accountId === 'string' ? await deps.sessionVersion(kept.accountId) : null;
      const command: OAuthArtifactCommand = { type: 'SaveOAuthArtifact', data: { kind: this.kind, payload: kept, expiresInSeconds: expiresIn, now: now() } };
      await run(this.stream(id), command, actorOfSave(this.kind, kept));
      if (this.kind === 'Session' && typeof payload.uid === 'string') await run(sessionByUid(payload.uid), { ...command, data: { ...command.data, payload: { ...kept, idHash: hashId(id) } } });
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const at = now();
      const state = await load(this.stream(id));
      if (!live(state, at)) return undefined;
      // A token of a revoked (or vanished) grant is no token: one event on the grant ends them all.
      if (TOKEN_KINDS.has(this.kind) && !(await grantLive(state.payload.grantId, at))) return undefined;
      if (this.kind === 'Grant' && !(await grantSessionHolds(state.payload))) return undefined;
      return { ...state.payload, jti: id, ...(state.consumed === null ? {} : { consumed: Math.floor(Date.parse(state.consumed) / 1000) }) };
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      if (this.kind !== 'Session') return undefined;
      // The uid outlives a session id: a login destroys the session and saves it anew under a new
      // id with the same uid. The pointer names the latest id; that id's own stream says if it lives.
      const at = now();
      const pointer = await load(sessionByUid(uid));
      if (!live(pointer, at) || typeof pointer.payload.idHash !== 'string') return undefined;
      const session = await load(oauthArtifactStream('Session', pointer.payload.idHash));
      return live(session, at) ? { ...session.payload } : undefined;
    }

    async findByUserCode(): Promise<undefined> {
      return undefined;
    }

    async consume(id: string): Promise<void> {
      try {
        await run(this.stream(id), { type: 'ConsumeOAuthArtifact', data: { kind: this.kind, now: now() } });
      } catch (error) {
        // Lost a race with another exchange of the same code: answered as the replay it is.
        if (error instanceof ConflictError) throw deps.invalidGrant(`${this.kind} already consumed`);
        throw error;
      }
    }

    async destroy(id: string): Promise<void> {
      await run(this.stream(id), { type: 'EndOAuthArtifact', data: { kind: this.kind, reason: 'destroyed', now: now() } });
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      // Every model is asked; the grant's own stream is the one place to write.
      await run(oauthArtifactStream('Grant', hashId(grantId)), { type: 'EndOAuthArtifact', data: { kind: 'Grant', reason: 'revoked', now: now() } });
    }
  }

  return class EventStoreAdapter implements OidcAdapter {
    private readonly inner: OidcAdapter;
    constructor(name: string) {
      this.inner = name === 'Client' ? new ClientAdapter() : isArtifactKind(name) ? new ArtifactAdapter(name) : new UnsupportedAdapter(name);
    }
    upsert(id: string, payload: AdapterPayload, expiresIn: number) {
      return this.inner.upsert(id, payload, expiresIn);
    }
    find(id: string) {
      return this.inner.find(id);
    }
    findByUserCode(userCode: string) {
      return this.inner.findByUserCode(userCode);
    }
    findByUid(uid: string) {
      return this.inner.findByUid(uid);
    }
    consume(id: string) {
      return this.inner.consume(id);
    }
    destroy(id: string) {
      return this.inner.destroy(id);
    }
    revokeByGrantId(grantId: string) {
      return this.inner.revokeByGrantId(grantId);
    }
  };
}

/**
 * oidc-provider leaves optional fields `undefined` (an access token's `sessionUid`, say); JSON drops
 * them, and so do we, so that the decider's check for plain JSON refuses only what JSON would change.
 */
function withoutUndefined<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutUndefined) as T;
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined).map(([k, v]) => [k, withoutUndefined(v)])) as T;
}

function unsupported(): Promise<never> {
  return Promise.reject(new Error('not supported by the OAuth adapter'));
}

/** Models of features we leave off (device flow, PAR, dynamic registration...): refused loudly. */
class UnsupportedAdapter implements OidcAdapter {
  constructor(private readonly name: string) {}
  private refuse(): Promise<never> {
    return Promise.reject(new Error(`oidc-provider model ${this.name} is not persisted: its feature is off`));
  }
  upsert = () => this.refuse();
  find = () => this.refuse();
  findByUserCode = () => this.refuse();
  findByUid = () => this.refuse();
  consume = () => this.refuse();
  destroy = () => this.refuse();
  revokeByGrantId = () => this.refuse();
}
