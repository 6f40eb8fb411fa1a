import { z } from 'zod';
import { senderOf, supportRequestEmail } from '../../commands/users/accountMail';
import { ForbiddenError, NotFoundError, ValidationError } from '../../domain/shared/errors';
import type { ApiDeps } from '../apiDeps';
import { requestContext } from '../auth/principal';
import { intParam, operation, type Operation } from '../http/operation';

/** The body of an enterprise upgrade or trial extension request (same type in the SDK). */
export const EnterpriseUpgradeOrTrialExtensionRequest = z.object({
  reason: z.string().max(5000).optional(),
  useCase: z.string().max(5000).optional(),
  timeline: z.string().max(1000).optional(),
  objective: z.string().max(5000).optional(),
  trialId: z.number().int().optional(),
});

/** Organization operations that the accounts work needs (the organizations issue brings the rest). */
export function organizationOperations(deps: ApiDeps): Operation[] {
  return [
    operation({
      operationId: 'requestEnterpriseTrialExtension',
      method: 'post',
      path: '/api/organizations/:organizationId/trial/request-extension',
      summary: "Ask the support team to extend the organization's enterprise trial",
      auth: 'jwt',
      body: EnterpriseUpgradeOrTrialExtensionRequest,
      async handler({ principal, params, body, requestId, settle }) {
        if (principal.kind !== 'user') throw new ForbiddenError('A user must ask for a trial extension');
        const organizationId = intParam(params, 'organizationId');
        const organization = (await deps.organizations.forMember(principal.user.id)).find((o) => o.id === organizationId);
        if (!organization) throw new NotFoundError(`Organization ${organizationId} not found among your organizations`, 'ORGANIZATION_NOT_FOUND');
        if (organization.trialId === null) throw new ValidationError('This organization has no enterprise trial to extend', 'NO_TRIAL');
        const user = principal.user;
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
