import type { OAuthArtifactEvent } from '../../domain/oauth/oauthArtifactEvents';
import type { ReadStore } from '../../stores/readstore/readStore';
import { defineProjection, insertOnce, updateOnce } from '../projection';
import { OAUTH_GRANTS, type OAuthGrantDocument } from './oauthGrantDocument';

const grants = (store: ReadStore) => store.collection<OAuthGrantDocument>(OAUTH_GRANTS);

// The payload is oidc-provider's (any plain JSON the decider accepted): read defensively.
const userIdOf = (accountId: unknown): number | null => (typeof accountId === 'string' && /^[1-9][0-9]{0,14}$/.test(accountId) ? Number(accountId) : null);
const clientIdOf = (clientId: unknown): string | null => (typeof clientId === 'string' && clientId.length > 0 && clientId.length <= 128 ? clientId : null);
const versionOf = (version: unknown): number | null => (typeof version === 'number' && Number.isSafeInteger(version) ? version : null);

export const oauthGrantsProjection = defineProjection<OAuthArtifactEvent>('oauthGrants', [OAUTH_GRANTS], {
  async OAuthArtifactSaved(event, store) {
    if (event.data.kind !== 'Grant') return;
    const p = event.data.payload;
    const fields = { userId: userIdOf(p.accountId), clientId: clientIdOf(p.clientId), sessionVersion: versionOf(p.sessionVersion), expires: event.data.expires };
    // Saved again as the user consents to more: the first save creates it, later ones update it.
    await insertOnce(grants(store), { _id: event.streamId, ...fields, ended: null, _position: '' }, event);
    await updateOnce(grants(store), event.streamId, { $set: fields }, event);
  },

  async OAuthArtifactEnded(event, store) {
    if (event.data.kind !== 'Grant') return;
    await updateOnce(grants(store), event.streamId, { $set: { ended: event.data.ended } }, event);
  },
});
