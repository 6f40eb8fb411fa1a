import { z } from 'zod';
import type { CommandContext } from '../../commands/commandContext';
import { createProject } from '../../commands/projects/createProject';
import { registerUser } from '../../commands/users/registerUser';
import { startCheckout, verifyBodySignature } from '../../commands/users/subscriptions';
import { startEnterpriseTrial } from '../../commands/users/userOrganizations';
import { ServiceUnavailableError } from '../../domain/shared/errors';
import type { ApiDeps } from '../apiDeps';
import { operation, type Operation, type OperationRequest } from '../http/operation';
import { CreateUserRequest, Password, registrationInput } from './accountRoutes';

const CreateProTierUserRequest = CreateUserRequest.extend({ redirectUrlOrigin: z.string().optional(), redirectUrlQueryParams: z.string().optional() });

const CreateEnterpriseTrialUserRequest = z.object({
  email: z.string().min(3).max(256),
  name: z.string().min(1).max(256),
  username: z.string().min(1).max(64),
  privacyPolicy: z.boolean(),
  turnstileResponse: z.string(),
  organizationName: z.string().min(1).max(128).optional(),
  expirationDate: z.iso.datetime({ offset: true }).optional(),
  notes: z.string().max(2000).optional(),
  useCase: z.string().optional(),
  userHasMLModelsInProduction: z.enum(['yes', 'no', 'no, but we will soon']).optional(),
  companyName: z.string().max(256).optional(),
  companySize: z.string().optional(),
  country: z.string().optional(),
  stateOrProvince: z.string().optional(),
  redirectUrlOrigin: z.string().optional(),
  redirectUrlQueryParams: z.string().optional(),
  password: Password.optional(),
  jobTitle: z.string().max(256).optional(),
  utmParams: z.array(z.unknown()).optional(),
});

/**
 * Operations for the service's own internal callers (the sign-up site, the sales tooling). The SDK
 * types carry no signature field, so the signature travels in a header:
 * `x-internal-signature: sha256=<hex HMAC-SHA256 of the raw body>` made with INTERNAL_API_SECRET.
 */
export function internalOperations(deps: ApiDeps): Operation[] {
  const verified = (request: OperationRequest<unknown, unknown, 'none'>): CommandContext => {
    const secret = deps.settings.internalApiSecret;
    if (!secret) throw new ServiceUnavailableError('Internal operations are not configured on this installation (INTERNAL_API_SECRET)');
    verifyBodySignature(request.ctx.request.rawBody ?? '', request.ctx.get('x-internal-signature'), secret);
    return { actor: 'system:internal', correlationId: request.requestId, now: new Date() };
  };

  return [
    operation({
      operationId: 'createProTierUser',
      method: 'post',
      path: '/api-create-pro-user',
      summary: 'Internal: create a user whose paid plan starts when the payment notification arrives',
      auth: 'none',
      body: CreateProTierUserRequest,
      async handler(request) {
        const ctx = verified(request);
        const b = request.body;
        const { userId } = await registerUser(deps, registrationInput(b), ctx);
        const userCtx = { ...ctx, actor: `user:${userId}` };
        await createProject(deps, { name: b.projectName ?? `${b.username}-project-1`, ownerUserId: userId, isPublic: false }, userCtx);
        const { redirectUrl, position } = await startCheckout(deps.events, userId, deps.settings.paymentPortalUrl, userCtx);
        await request.settle(position);
        return { id: userId, redirectUrl };
      },
    }),
    operation({
      operationId: 'createEnterpriseTrialUser',
      method: 'post',
      path: '/api-user-create-enterprise-trial',
      summary: 'Internal: create a user with an enterprise trial and its organization',
      auth: 'none',
      body: CreateEnterpriseTrialUserRequest,
      async handler(request) {
        const ctx = verified(request);
        const b = request.body;
        const { userId } = await registerUser(deps, registrationInput(b), ctx);
        const { organizationId, position } = await startEnterpriseTrial(
          deps,
          { id: userId, username: b.username },
          { organizationName: b.organizationName ?? null, expirationDate: b.expirationDate ? new Date(b.expirationDate) : null, notes: b.notes ?? null },
          { ...ctx, actor: `user:${userId}` },
        );
        await request.settle(position);
        return { id: organizationId, userId };
      },
    }),
  ];
}
