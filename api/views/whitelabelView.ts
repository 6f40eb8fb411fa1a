import { DEPLOYMENT_TARGET_FORMATS } from '../../domain/deployment/deploymentTargets';
import { LEARN_BLOCKS } from '../../domain/impulse/blockCatalog';
import type { WhitelabelDocument } from '../../projections/whitelabels/whitelabelDocument';

/** The SDK's Whitelabel. Themes and development boards do not exist here: no theme (0), no boards. */
export function whitelabelView(w: WhitelabelDocument): Record<string, unknown> {
  return {
    id: w.id,
    name: w.name,
    domain: w.domain,
    ownerOrganizationId: w.ownerOrganizationId,
    themeId: 0,
    identityProviders: w.identityProviders,
    allowPasswordAuth: w.allowPasswordAuth,
    deploymentTargets: w.deploymentTargets,
    allDeploymentTargets: [...DEPLOYMENT_TARGET_FORMATS],
    allowSignup: w.allowSignup,
    allowFreeProjects: w.allowFreeProjects,
    exposePublicProjects: w.exposePublicProjects,
    supportedProjectTypes: [],
    allowNewProjectUi: true,
    learningBlocks: w.learningBlocks,
    allLearningBlocks: LEARN_BLOCKS.map((b) => ({ title: b.title, type: b.type })),
    developmentBoards: [],
    allDevelopmentBoards: [],
    ...(w.organizationsLimit !== null ? { organizationsLimit: w.organizationsLimit } : {}),
    disablePublicEntities: w.disablePublicEntities,
    requireCollaboratorsInWhitelabel: w.requireCollaboratorsInWhitelabel,
    disableMarketingFeatures: w.disableMarketingFeatures,
    disableForumAccess: w.disableForumAccess,
  };
}
