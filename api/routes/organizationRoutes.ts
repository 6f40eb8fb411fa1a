// Organizations (sdk-reference 2.8): settings, members, API keys. Who may do what is decided by
// `requireOrganization` before a body is read; the organization's jobs are in organizationJobRoutes.
import { z } from 'zod';
import { addOrganizationApiKey, inviteMember, inviteMemberByName, runOrganizationCommand, withdrawMemberInvitation } from '../../commands/organizations/organizationCommands';
import { createOrganization } from '../../commands/organizations/createOrganization';
import { senderOf, supportRequestEmail } from '../../commands/users/accountMail';
import { API_KEY_VALUE_MAX } from '../../domain/project/projectDecider';
import { DATASET_NAME_MAX, DATASETS_MAX, INVITED_AS_MAX, ORGANIZATION_KEY_NAME_MAX, ORGANIZATION_NAME_MAX, ORGANIZATION_README_MAX } from '../../domain/organization/organizationDecider';
import { ORGANIZATION_API_KEY_ROLES, ORGANIZATION_MEMBER_ROLES } from '../../domain/organization/organizationEvents';
import { ForbiddenError, NotFoundError, UnauthorizedError, ValidationError } from '../../domain/shared/errors';
import type { Position } from '../../stores/eventstore/eventStore';
import type { ApiDeps } from '../apiDeps';
import { MANAGE_LEVEL, requireOrganization, type OrganizationCaller, type OrganizationNeed } from '../auth/organizationAccess';
import { requestContext, type Principal } from '../auth/principal';
import { isStaff } from '../auth/staff';
import { authorizeSelfOrStaff, signedInUser, targetUser } from '../auth/userTarget';
import { intParam, operation, type Operation } from '../http/operation';
import { organizationApiKeyView, organizationInfoView, organizationViews, whitelabelsOfOrganizations, type OrganizationAudience } from '../views/organizationView';

/** The body of an enterprise upgrade or trial extension request (same type in the SDK). */
export const EnterpriseUpgradeOrTrialExtensionRequest = z.object({
  reason: z.string().max(5000).optional(),
  useCase: z.string().max(5000).optional(),
  timeline: z.string().max(1000).optional(),
  objective: z.string().max(5000).optional(),
  trialId: z.number().int().optional(),
});

const role = z.enum(ORGANIZATION_MEMBER_ROLES);
const datasets = z.array(z.string().min(1).max(DATASET_NAME_MAX)).max(DATASETS_MAX);

const CreateOrganizationRequest = z.object({ organizationName: z.string().min(1).max(ORGANIZATION_NAME_MAX) }).strict();
const UpdateOrganizationRequest = z
  .object({
    name: z.string().min(1).max(ORGANIZATION_NAME_MAX).optional(),
    readme: z.string().max(ORGANIZATION_README_MAX).optional(),
    showHeaderImgMask: z.boolean().optional(),
    experiments: z.array(z.string().min(1).max(64)).max(32).optional(),
  })
  .strict();
const AddMemberRequest = z.object({ usernameOrEmail: z.string().trim().min(1).max(INVITED_AS_MAX), role, datasets }).strict();
const InviteMemberRequest = z.object({ email: z.email().max(256), role, datasets }).strict();
const RemoveMemberRequest = z.object({ id: z.number().int().positive() }).strict();
const SetMemberRoleRequest = z.object({ role }).strict();
const SetMemberDatasetsRequest = z.object({ datasets }).strict();
const AddOrganizationApiKeyRequest = z
  .object({
    name: z.string().min(1).max(ORGANIZATION_KEY_NAME_MAX),
    apiKey: z.string().max(API_KEY_VALUE_MAX).optional(),
    role: z.enum(ORGANIZATION_API_KEY_ROLES),
    ttl: z.number().int().positive().max(10 * 365 * 24 * 3600).optional(),
  })
  .strict();

export function organizationOperations(deps: ApiDeps): Operation[] {
  const ctxOf = (request: { principal: Principal; requestId: string }) => requestContext(request.principal, request.requestId);
  const userIdOf = (p: Principal): number | null => (p.kind === 'user' ? p.user.id : null);
  const settled = async (request: { settle(position: Position | undefined): Promise<void> }, position: Position | undefined) => {
    await request.settle(position);
    return {};
  };
  const memberParam = (params: Record<string, string>) => intParam(params, 'memberId');

  /**
   * The access of an operation on the organization of its path: any caller, an organization key
   * included, that has `need` on it, checked before the body is read; the handler gets the caller's
   * standing as `request.authorized`. Member changes give a human account lasting access: with
   * `usersOnly`, only a signed-in admin (or staff) makes them, never a key.
   */
  const onOrganization = (need: OrganizationNeed, options: { usersOnly?: true } = {}) => ({
    auth: 'any' as const,
    acceptsOrganizationKey: true,
    async authorize(principal: Principal, params: Record<string, string>): Promise<OrganizationCaller> {
      if (options.usersOnly && principal.kind !== 'user') throw new ForbiddenError('Members are managed by a signed-in admin, not with an API key');
      return requireOrganization(deps, principal, intParam(params, 'organizationId'), need);
    },
  });

  const usersByIds = async (ids: readonly number[]) => new Map((await deps.users.byIds([...new Set(ids)])).map((u) => [u.id, u]));

  const listForUser = (operationId: string, path: string, byId: boolean) =>
    operation({
      operationId,
      method: 'get',
      path,
      summary: byId ? "The organizations a user belongs to (oneself; staff may list others')" : 'The organizations the current user belongs to',
      auth: 'jwt',
      oauthScope: byId ? 'organizations:read' : 'user:read',
      ...(byId ? { authorize: authorizeSelfOrStaff(deps.settings.staffUsernames) } : {}),
      async handler({ principal, params }) {
        const target = byId ? await targetUser(deps.users, principal, params) : signedInUser(principal);
        return { organizations: await organizationViews(deps, await deps.organizations.forMember(target.id), target.id) };
      },
    });

  return [
    listForUser('listOrganizationsCurrentUser', '/api/user/organizations', false),
    listForUser('listOrganizationsUser', '/api/users/:userId/organizations', true),
    operation({
      operationId: 'createOrganization',
      method: 'post',
      path: '/api/organizations/create',
      summary: 'Create an organization (staff): the caller is its first admin; answers an admin API key for it',
      auth: 'jwt',
      body: CreateOrganizationRequest,
      async authorize(principal) {
        if (!isStaff(signedInUser(principal), deps.settings.staffUsernames)) throw new ForbiddenError('Only staff can create organizations this way', 'MISSING_PERMISSION');
      },
      async handler(request) {
        const user = signedInUser(request.principal);
        const ctx = ctxOf(request);
        const { organizationId } = await createOrganization(deps, { name: request.body.organizationName, isDeveloperProfile: false, ownerUserId: user.id, trialId: null }, ctx);
        const key = await addOrganizationApiKey(deps, organizationId, { name: 'Admin key', role: 'admin', createdByUserId: user.id }, ctx);
        await request.settle(key.position);
        return { id: organizationId, apiKey: key.apiKey };
      },
    }),
    operation({
      operationId: 'listOrganizations',
      method: 'get',
      path: '/api/organizations',
      summary: "The caller's organizations; with an organization API key, its organization",
      auth: 'any',
      acceptsOrganizationKey: true,
      async handler({ principal }) {
        // The official CLI tells a project key from an organization key by this very answer.
        if (principal.kind === 'apiKey') throw new UnauthorizedError('Invalid API key: this is a project API key, not an organization API key', 'INVALID_API_KEY');
        if (principal.kind === 'organizationKey') {
          const organization = await deps.organizations.byId(principal.organizationId);
          return { organizations: await organizationViews(deps, organization ? [organization] : [], null) };
        }
        return { organizations: await organizationViews(deps, await deps.organizations.forMember(principal.user.id), principal.user.id) };
      },
    }),
    operation({
      operationId: 'getOrganizationInfo',
      method: 'get',
      path: '/api/organizations/:organizationId',
      summary: 'The organization with its members (organization.users, with role and datasets); a guest sees only their own entry',
      ...onOrganization('guest'),
      async handler({ authorized: caller }) {
        const o = caller.organization;
        const audience: OrganizationAudience = caller.isGuest ? { kind: 'guest', userId: caller.userId! } : caller.userId === null ? { kind: 'apiKey' } : { kind: 'full' };
        // Pending invitations to those who may withdraw them; never to keys, members or guests.
        const showInvitations = caller.userId !== null && caller.level >= MANAGE_LEVEL;
        const inviters = showInvitations ? (o.invitations ?? []).map((i) => i.invitedByUserId) : [];
        const [users, whitelabels] = await Promise.all([usersByIds([...o.memberIds, ...inviters]), whitelabelsOfOrganizations(deps, [o.id])]);
        return organizationInfoView(o, {
          users,
          staffUsernames: deps.settings.staffUsernames,
          publicUrl: deps.settings.publicUrl,
          audience,
          whitelabel: whitelabels.get(o.id) ?? null,
          showInvitations,
        });
      },
    }),
    operation({
      operationId: 'updateOrganization',
      method: 'post',
      path: '/api/organizations/:organizationId',
      summary: "Change the organization's name, readme, header mask or experiments (admins)",
      ...onOrganization('manage'),
      body: UpdateOrganizationRequest,
      async handler(request) {
        return settled(request, await runOrganizationCommand(deps.events, request.authorized.organization.id, { type: 'UpdateOrganization', data: { changes: request.body, now: new Date() } }, ctxOf(request)));
      },
    }),
    operation({
      operationId: 'deleteOrganization',
      method: 'delete',
      path: '/api/organizations/:organizationId',
      summary: 'Delete the organization (admins): gone from every listing, its keys stop working',
      ...onOrganization('manage'),
      async handler(request) {
        return settled(request, await runOrganizationCommand(deps.events, request.authorized.organization.id, { type: 'DeleteOrganization', data: { now: new Date() } }, ctxOf(request)));
      },
    }),
    operation({
      operationId: 'addOrganizationMember',
      method: 'post',
      path: '/api/organizations/:organizationId/members/add',
      summary:
        'Invite a user, by username or e-mail, as admin, member or guest (with the datasets a guest may see); they become a member once they accept. Answers the invitation id, for any name typed',
      ...onOrganization('manage', { usersOnly: true }),
      body: AddMemberRequest,
      async handler(request) {
        const { invitationId, position } = await inviteMemberByName(
          deps,
          { organizationId: request.authorized.organization.id, usernameOrEmail: request.body.usernameOrEmail, role: request.body.role, datasets: request.body.datasets, invitedByUserId: signedInUser(request.principal).id },
          ctxOf(request),
        );
        await request.settle(position);
        // The id of what was created: the invitation (the SDK's EntityCreatedResponse).
        return { id: invitationId };
      },
    }),
    operation({
      operationId: 'inviteOrganizationMember',
      method: 'post',
      path: '/api/organizations/:organizationId/members/invite',
      summary: 'Invite by e-mail: an account with that address is invited; otherwise an account is created pending and its activation code e-mailed. Answers the invitation id either way',
      ...onOrganization('manage', { usersOnly: true }),
      body: InviteMemberRequest,
      async handler(request) {
        const inviter = signedInUser(request.principal);
        const { invitationId, position } = await inviteMember(
          deps,
          {
            organizationId: request.authorized.organization.id,
            organizationName: request.authorized.organization.name,
            email: request.body.email,
            role: request.body.role,
            datasets: request.body.datasets,
            invitedByUserId: inviter.id,
            inviterName: inviter.name ?? inviter.username,
          },
          ctxOf(request),
        );
        await request.settle(position);
        return { id: invitationId };
      },
    }),
    operation({
      operationId: 'withdrawOrganizationMemberInvitation',
      method: 'delete',
      path: '/api/organizations/:organizationId/members/invitations/:invitationId',
      summary: 'Withdraw an invitation the invitee has not answered (admins)',
      ...onOrganization('manage'),
      async handler(request) {
        const position = await withdrawMemberInvitation(deps.events, request.authorized.organization.id, intParam(request.params, 'invitationId'), userIdOf(request.principal), ctxOf(request));
        return settled(request, position);
      },
    }),
    operation({
      operationId: 'removeOrganizationMember',
      method: 'post',
      path: '/api/organizations/:organizationId/members/remove',
      summary: 'Remove a member (admins), or leave (any member, by their own id); the last admin cannot leave',
      auth: 'any',
      acceptsOrganizationKey: true,
      body: RemoveMemberRequest,
      async authorize(principal, params) {
        if (principal.kind !== 'user') throw new ForbiddenError('Members are managed by a signed-in admin, not with an API key');
        await requireOrganization(deps, principal, intParam(params, 'organizationId'), 'guest');
      },
      async handler(request) {
        const me = signedInUser(request.principal);
        const leaving = request.body.id === me.id;
        const caller = await requireOrganization(deps, request.principal, intParam(request.params, 'organizationId'), leaving ? 'guest' : 'manage');
        return settled(request, await runOrganizationCommand(deps.events, caller.organization.id, { type: 'RemoveMember', data: { userId: request.body.id, now: new Date() } }, ctxOf(request)));
      },
    }),
    operation({
      operationId: 'setOrganizationMemberRole',
      method: 'post',
      path: '/api/organizations/:organizationId/members/:memberId/role',
      summary: "Change a member's role (admins); the last admin cannot be demoted",
      ...onOrganization('manage', { usersOnly: true }),
      body: SetMemberRoleRequest,
      async handler(request) {
        const command = { type: 'SetMemberRole' as const, data: { userId: memberParam(request.params), role: request.body.role, now: new Date() } };
        return settled(request, await runOrganizationCommand(deps.events, request.authorized.organization.id, command, ctxOf(request)));
      },
    }),
    operation({
      operationId: 'setOrganizationMemberDatasets',
      method: 'post',
      path: '/api/organizations/:organizationId/members/:memberId/datasets',
      summary: 'Set the datasets a guest member may see (admins)',
      ...onOrganization('manage', { usersOnly: true }),
      body: SetMemberDatasetsRequest,
      async handler(request) {
        const command = { type: 'SetMemberDatasets' as const, data: { userId: memberParam(request.params), datasets: request.body.datasets, now: new Date() } };
        return settled(request, await runOrganizationCommand(deps.events, request.authorized.organization.id, command, ctxOf(request)));
      },
    }),
    operation({
      operationId: 'listOrganizationApiKeys',
      method: 'get',
      path: '/api/organizations/:organizationId/apikeys',
      summary: "The organization's API keys, truncated (admins)",
      ...onOrganization('manage'),
      async handler({ authorized: caller }) {
        const keys = await deps.organizations.keysOf(caller.organization.id);
        const creators = await usersByIds(keys.flatMap((k) => (k.createdByUserId === null ? [] : [k.createdByUserId])));
        return { apiKeys: keys.map((k) => organizationApiKeyView(k, creators)) };
      },
    }),
    operation({
      operationId: 'addOrganizationApiKey',
      method: 'post',
      path: '/api/organizations/:organizationId/apikeys',
      summary: "Add an API key for the organization's routes (role admin or member, optional time to live in seconds)",
      ...onOrganization('manage'),
      body: AddOrganizationApiKeyRequest,
      async handler(request) {
        const b = request.body;
        const result = await addOrganizationApiKey(
          deps,
          request.authorized.organization.id,
          { name: b.name, role: b.role, createdByUserId: userIdOf(request.principal), ...(b.apiKey === undefined ? {} : { apiKey: b.apiKey }), ...(b.ttl === undefined ? {} : { ttlSeconds: b.ttl }) },
          ctxOf(request),
        );
        await request.settle(result.position);
        return { id: result.apiKeyId, apiKey: result.apiKey };
      },
    }),
    operation({
      operationId: 'revokeOrganizationApiKey',
      method: 'delete',
      path: '/api/organizations/:organizationId/apikeys/:apiKeyId',
      summary: 'Revoke an organization API key (admins): refused from the next request on',
      ...onOrganization('manage'),
      async handler(request) {
        const command = { type: 'RevokeApiKey' as const, data: { apiKeyId: intParam(request.params, 'apiKeyId'), now: new Date() } };
        return settled(request, await runOrganizationCommand(deps.events, request.authorized.organization.id, command, ctxOf(request)));
      },
    }),
    operation({
      operationId: 'requestEnterpriseTrialExtension',
      method: 'post',
      path: '/api/organizations/:organizationId/trial/request-extension',
      summary: "Ask the support team to extend the organization's enterprise trial",
      auth: 'jwt',
      body: EnterpriseUpgradeOrTrialExtensionRequest,
      async handler({ principal, params, body, requestId, settle }) {
        const user = signedInUser(principal);
        const organizationId = intParam(params, 'organizationId');
        const organization = (await deps.organizations.forMember(user.id)).find((o) => o.id === organizationId);
        if (!organization) throw new NotFoundError(`Organization ${organizationId} not found among your organizations`, 'ORGANIZATION_NOT_FOUND');
        if (organization.trialId === null) throw new ValidationError('This organization has no enterprise trial to extend', 'NO_TRIAL');
        const { position } = await deps.sendEmail(
          supportRequestEmail(user.id, deps.settings.supportEmail, `Trial extension request for ${organization.name}`, {
            From: senderOf(user),
            'Reply to': user.email ?? undefined,
            Organization: `${organization.name} (${organization.id})`,
            Trial: body.trialId ?? organization.trialId,
            Reason: body.reason,
            'Use case': body.useCase,
            Timeline: body.timeline,
            Objective: body.objective,
          }),
          requestContext(principal, requestId),
        );
        await settle(position);
        return {};
      },
    }),
  ];
}
