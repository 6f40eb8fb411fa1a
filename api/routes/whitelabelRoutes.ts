// White labels (WhitelabelsApi, sdk-reference 1.4): staff create, read, change and delete them; the
// owner organization's admins choose its deployment targets; anyone reads its domain.
import { z } from 'zod';
import { createWhitelabel, deleteWhitelabel, updateWhitelabel } from '../../commands/whitelabels/whitelabelCommands';
import { impulseBlocksFor } from '../../domain/whitelabel/whitelabelBlocks';
import { ForbiddenError, NotFoundError, ValidationError } from '../../domain/shared/errors';
import { WHITELABEL_NAME_MAX } from '../../domain/whitelabel/whitelabelDecider';
import type { WhitelabelSettings } from '../../domain/whitelabel/whitelabelEvents';
import { LEARN_BLOCK_TYPES } from '../../domain/impulse/blockCatalog';
import { DEPLOYMENT_TARGET_FORMATS } from '../../domain/deployment/deploymentTargets';
import type { WhitelabelDocument } from '../../projections/whitelabels/whitelabelDocument';
import type { ApiDeps } from '../apiDeps';
import { requireOrganization } from '../auth/organizationAccess';
import { requestContext, type Principal } from '../auth/principal';
import { isStaff } from '../auth/staff';
import { signedInUser } from '../auth/userTarget';
import { intParam, operation, type Operation } from '../http/operation';
import { whitelabelView } from '../views/whitelabelView';

const names = (max: number) => z.array(z.string().min(1).max(128)).max(max);
const Settings = {
  name: z.string().min(1).max(WHITELABEL_NAME_MAX),
  domain: z.string().min(1).max(253),
  ownerOrganizationId: z.number().int().positive(),
  identityProviders: names(32),
  allowPasswordAuth: z.boolean(),
  deploymentTargets: names(256),
  learningBlocks: names(64),
  allowSignup: z.boolean(),
  allowFreeProjects: z.boolean(),
  exposePublicProjects: z.boolean(),
  organizationsLimit: z.number().int().min(0).nullable(),
  disablePublicEntities: z.boolean(),
  requireCollaboratorsInWhitelabel: z.boolean(),
  disableMarketingFeatures: z.boolean(),
  disableForumAccess: z.boolean(),
};

/** The SDK's CreateWhitelabelRequest (its `documentationUrl`, `sandboxed` and `customLimits` have no effect here and are refused). */
const CreateWhitelabelRequest = z
  .object({
    name: Settings.name,
    domain: Settings.domain,
    ownerOrganizationId: Settings.ownerOrganizationId,
    identityProviders: Settings.identityProviders.optional(),
    allowPasswordAuth: Settings.allowPasswordAuth.optional(),
    deploymentTargets: Settings.deploymentTargets.optional(),
    learningBlocks: Settings.learningBlocks.optional(),
    allowSignup: Settings.allowSignup.optional(),
    allowFreeProjects: Settings.allowFreeProjects.optional(),
    exposePublicProjects: Settings.exposePublicProjects.optional(),
    organizationsLimit: Settings.organizationsLimit.optional(),
    disableMarketingFeatures: Settings.disableMarketingFeatures.optional(),
    disableForumAccess: Settings.disableForumAccess.optional(),
  })
  .strict();

/** The SDK's UpdateWhitelabelInternalRequest, plus every setting of creation. */
const UpdateWhitelabelRequest = z.object(Object.fromEntries(Object.entries(Settings).map(([k, v]) => [k, v.optional()])) as { [K in keyof typeof Settings]: z.ZodOptional<(typeof Settings)[K]> }).strict();

const UpdateDeploymentTargetsRequest = z.object({ targets: Settings.deploymentTargets.optional() }).strict();

export function whitelabelOperations(deps: ApiDeps): Operation[] {
  const requireStaff = async (principal: Principal) => {
    if (principal.kind !== 'user' || !isStaff(principal.user, deps.settings.staffUsernames)) throw new ForbiddenError('White labels are managed by staff', 'MISSING_PERMISSION');
  };
  const whitelabelOf = async (params: Record<string, string>): Promise<WhitelabelDocument> => {
    const id = intParam(params, 'whitelabelIdentifier');
    const whitelabel = await deps.whitelabels.byId(id);
    if (!whitelabel) throw new NotFoundError(`White label ${id} not found`, 'WHITELABEL_NOT_FOUND');
    return whitelabel;
  };
  /**
   * Who may read what a white label offers: staff, its owner organization (members and keys), and
   * its projects (their collaborators and their keys). Another tenant's key learns nothing of it.
   */
  const readsWhitelabel = async (principal: Principal, whitelabel: WhitelabelDocument): Promise<boolean> => {
    switch (principal.kind) {
      case 'organizationKey':
        return principal.organizationId === whitelabel.ownerOrganizationId;
      case 'apiKey':
        return principal.role !== 'ingestiononly' && (await deps.projects.byId(principal.projectId))?.whitelabelId === whitelabel.id;
      case 'user': {
        if (isStaff(principal.user, deps.settings.staffUsernames)) return true;
        const owner = await deps.organizations.byId(whitelabel.ownerOrganizationId);
        if (owner?.members.some((m) => m.userId === principal.user.id)) return true;
        return (await deps.projects.forCollaborator(principal.user.id)).some((p) => p.whitelabelId === whitelabel.id);
      }
    }
  };
  /** References to other things (organization, identity providers) are checked here; the decider checks the rest. */
  const checkReferences = async (s: Partial<WhitelabelSettings>) => {
    if (s.ownerOrganizationId !== undefined && !(await deps.organizations.byId(s.ownerOrganizationId))) {
      throw new ValidationError(`"ownerOrganizationId": organization ${s.ownerOrganizationId} not found`);
    }
    const known = deps.settings.identityProviders.map((p) => p.name);
    const unknown = (s.identityProviders ?? []).filter((name) => !known.includes(name));
    if (unknown.length > 0) throw new ValidationError(`"identityProviders": unknown identity provider(s) ${unknown.map((n) => `"${n}"`).join(', ')}; configured: ${known.map((n) => `"${n}"`).join(', ') || 'none'}`);
  };

  return [
    operation({
      operationId: 'getWhitelabelDomain',
      method: 'get',
      path: '/api/whitelabel/:whitelabelIdentifier/domain',
      summary: "A white label's domain",
      auth: 'none',
      async handler({ params }) {
        return { domain: (await whitelabelOf(params)).domain };
      },
    }),
    operation({
      operationId: 'getAllWhitelabels',
      method: 'get',
      path: '/api/whitelabels',
      summary: 'Every white label (staff)',
      auth: 'jwt',
      authorize: requireStaff,
      async handler() {
        return { whitelabels: (await deps.whitelabels.all()).map(whitelabelView) };
      },
    }),
    operation({
      operationId: 'createWhitelabel',
      method: 'post',
      path: '/api/whitelabels',
      summary: 'Create a white label (staff): every deployment target and learn block unless listed',
      auth: 'jwt',
      authorize: requireStaff,
      body: CreateWhitelabelRequest,
      async handler({ principal, body, requestId, settle }) {
        const settings: WhitelabelSettings = {
          name: body.name,
          domain: body.domain,
          ownerOrganizationId: body.ownerOrganizationId,
          identityProviders: body.identityProviders ?? [],
          allowPasswordAuth: body.allowPasswordAuth ?? true,
          deploymentTargets: body.deploymentTargets ?? [...DEPLOYMENT_TARGET_FORMATS],
          learningBlocks: body.learningBlocks ?? [...LEARN_BLOCK_TYPES],
          allowSignup: body.allowSignup ?? true,
          allowFreeProjects: body.allowFreeProjects ?? true,
          exposePublicProjects: body.exposePublicProjects ?? false,
          organizationsLimit: body.organizationsLimit ?? null,
          disablePublicEntities: false,
          requireCollaboratorsInWhitelabel: false,
          disableMarketingFeatures: body.disableMarketingFeatures ?? false,
          disableForumAccess: body.disableForumAccess ?? false,
        };
        await checkReferences(settings);
        const { whitelabelId, position } = await createWhitelabel(deps, settings, requestContext(principal, requestId));
        await settle(position);
        return { id: whitelabelId, themeId: 0 };
      },
    }),
    operation({
      operationId: 'getWhitelabel',
      method: 'get',
      path: '/api/whitelabel/:whitelabelIdentifier',
      summary: 'A white label (staff, or an admin of its owner organization)',
      auth: 'jwt',
      async handler({ principal, params }) {
        const whitelabel = await whitelabelOf(params);
        if (!isStaff(signedInUser(principal), deps.settings.staffUsernames)) await requireOrganization(deps, principal, whitelabel.ownerOrganizationId, 'manage');
        return { whitelabel: whitelabelView(whitelabel) };
      },
    }),
    operation({
      operationId: 'updateWhitelabel',
      method: 'put',
      path: '/api/whitelabel/:whitelabelIdentifier',
      summary: "Change a white label's settings (staff)",
      auth: 'jwt',
      authorize: requireStaff,
      body: UpdateWhitelabelRequest,
      async handler({ principal, params, body, requestId, settle }) {
        const whitelabel = await whitelabelOf(params);
        const changes = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as Partial<WhitelabelSettings>;
        await checkReferences(changes);
        await settle(await updateWhitelabel(deps, whitelabel.id, changes, requestContext(principal, requestId)));
        return {};
      },
    }),
    operation({
      operationId: 'deleteWhitelabel',
      method: 'delete',
      path: '/api/whitelabel/:whitelabelIdentifier',
      summary: 'Delete a white label (staff); its domain is free again',
      auth: 'jwt',
      authorize: requireStaff,
      async handler({ principal, params, requestId, settle }) {
        const whitelabel = await whitelabelOf(params);
        await settle(await deleteWhitelabel(deps, whitelabel.id, requestContext(principal, requestId)));
        return {};
      },
    }),
    operation({
      operationId: 'updateDeploymentTargets',
      method: 'post',
      path: '/api/whitelabel/:whitelabelIdentifier/deploymentTargets',
      summary: "Choose the deployment targets (by format) the white label's projects see: staff, or admins of its owner organization",
      auth: 'any',
      acceptsOrganizationKey: true,
      body: UpdateDeploymentTargetsRequest,
      async authorize(principal, params) {
        const whitelabel = await whitelabelOf(params);
        if (principal.kind === 'user' && isStaff(principal.user, deps.settings.staffUsernames)) return;
        await requireOrganization(deps, principal, whitelabel.ownerOrganizationId, 'manage');
      },
      async handler({ principal, params, body, requestId, settle }) {
        const whitelabel = await whitelabelOf(params);
        if (body.targets === undefined) return {};
        await settle(await updateWhitelabel(deps, whitelabel.id, { deploymentTargets: body.targets }, requestContext(principal, requestId)));
        return {};
      },
    }),
    operation({
      operationId: 'getAllImpulseBlocks',
      method: 'get',
      path: '/api/whitelabel/:whitelabelIdentifier/impulse/blocks',
      summary: "The impulse blocks a white label's projects can use: the learn blocks it enables (its organization, its projects, staff)",
      auth: 'any',
      acceptsOrganizationKey: true,
      async authorize(principal, params) {
        const whitelabel = await whitelabelOf(params);
        if (!(await readsWhitelabel(principal, whitelabel))) {
          throw new ForbiddenError(`White label ${whitelabel.id}'s blocks are for its organization, its projects and staff`);
        }
      },
      async handler({ params }) {
        return impulseBlocksFor(await whitelabelOf(params));
      },
    }),
  ];
}
