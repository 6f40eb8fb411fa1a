import type { DomainEvent } from '../shared/decider';

export const whitelabelStream = (whitelabelId: number): string => `whitelabel-${whitelabelId}`;

/** What a white label sets: its brand, who owns it, and what its users may do and use. */
export interface WhitelabelSettings {
  name: string;
  /** The host name its users reach the service at, lowercase. */
  domain: string;
  ownerOrganizationId: number;
  /** Names of configured SSO identity providers its users sign in with. */
  identityProviders: string[];
  allowPasswordAuth: boolean;
  /** Formats of the deployment targets its projects see. */
  deploymentTargets: string[];
  /** Learn block types its projects may use. */
  learningBlocks: string[];
  allowSignup: boolean;
  allowFreeProjects: boolean;
  exposePublicProjects: boolean;
  organizationsLimit: number | null;
  disablePublicEntities: boolean;
  requireCollaboratorsInWhitelabel: boolean;
  disableMarketingFeatures: boolean;
  disableForumAccess: boolean;
}

export type WhitelabelCreated = DomainEvent<'WhitelabelCreated', { whitelabelId: number; settings: WhitelabelSettings; created: string }>;

/** Only the settings that changed. */
export type WhitelabelUpdated = DomainEvent<'WhitelabelUpdated', { whitelabelId: number; changes: Partial<WhitelabelSettings>; updated: string }>;

export type WhitelabelDeleted = DomainEvent<'WhitelabelDeleted', { whitelabelId: number; deletedDate: string }>;

export type WhitelabelEvent = WhitelabelCreated | WhitelabelUpdated | WhitelabelDeleted;
