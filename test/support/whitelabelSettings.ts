import type { WhitelabelSettings } from '../../domain/whitelabel/whitelabelEvents';

/** A white label's settings with every field, for specs and the sample log; `overrides` change some. */
export function whitelabelSettings(overrides: Partial<WhitelabelSettings> = {}): WhitelabelSettings {
  return {
    name: 'Acme ML',
    domain: 'studio.acme.test',
    ownerOrganizationId: 3,
    identityProviders: [],
    allowPasswordAuth: true,
    deploymentTargets: ['zip', 'arduino'],
    learningBlocks: ['keras'],
    allowSignup: true,
    allowFreeProjects: false,
    exposePublicProjects: false,
    organizationsLimit: null,
    disablePublicEntities: false,
    requireCollaboratorsInWhitelabel: false,
    disableMarketingFeatures: false,
    disableForumAccess: false,
    ...overrides,
  };
}
