import type { IndexDeclaration } from '../../stores/readstore/indexDeclarations';
import type { WhitelabelSettings } from '../../domain/whitelabel/whitelabelEvents';

/** The `whitelabels` read model: one document per white label; deleted ones keep `deletedDate` and leave every lookup. */
export interface WhitelabelDocument extends WhitelabelSettings {
  _id: number;
  id: number;
  created: string;
  deletedDate: string | null;
  _position: string;
  [key: string]: unknown;
}

export const WHITELABELS = 'whitelabels';

/** The white label a host name serves (asked on every request that names a domain), and those an organization owns (its membership, in every organization view). */
export const WHITELABEL_INDEXES: readonly IndexDeclaration[] = [{ keys: { domain: 1 } }, { keys: { ownerOrganizationId: 1 } }];
