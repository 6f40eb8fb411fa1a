// The organizations a user starts for themselves: their developer profile (a personal
// organization) and an enterprise trial with its organization. Joining others' is in the invitation
// routes; the organizations themselves are in organizationRoutes.
import { z } from 'zod';
import { senderOf } from '../../commands/users/accountMail';
import { createDeveloperProfile, startEnterpriseTrial } from '../../commands/users/userOrganizations';
import type { ApiDeps } from '../apiDeps';
import { authorizeSelfOrStaff } from '../auth/userTarget';
import { operation, type Operation } from '../http/operation';
import { trialView } from '../views/userView';
import { BY_ID_SUMMARY, userRequests } from './userRequests';

/** JWT only. By id, a user reads their own trials; a staff user anyone's. */
export function userOrganizationOperations(deps: ApiDeps): Operation[] {
  const { targetOf, contextOf, mailSupport } = userRequests(deps);
  return [
    operation({
      operationId: 'createDeveloperProfile',
      method: 'post',
      path: '/api/user/create-developer-profile',
      summary: "Create the user's personal organization",
      auth: 'jwt',
      async handler(request) {
        const { organizationId, position } = await createDeveloperProfile(deps, request.user, contextOf(request));
        await request.settle(position);
        return { organizationId };
      },
    }),
    operation({
      operationId: 'startEnterpriseTrial',
      method: 'post',
      path: '/api/user/trial',
      summary: 'Start an enterprise trial with its organization (once per user)',
      auth: 'jwt',
      body: z.object({
        email: z.string().optional(),
        name: z.string().optional(),
        organizationName: z.string().min(1).max(128).optional(),
        expirationDate: z.iso.datetime({ offset: true }).optional(),
        notes: z.string().max(2000).optional(),
        useCase: z.string().optional(),
        userHasMLModelsInProduction: z.enum(['yes', 'no', 'no, but we will soon']).optional(),
        companyName: z.string().optional(),
        companySize: z.string().optional(),
        country: z.string().optional(),
        stateOrProvince: z.string().optional(),
        redirectUrlOrigin: z.string().optional(),
        redirectUrlQueryParams: z.string().optional(),
      }),
      async handler(request) {
        const { user, body: b } = request;
        const { organizationId, position } = await startEnterpriseTrial(
          deps,
          user,
          { organizationName: b.organizationName ?? null, expirationDate: b.expirationDate ? new Date(b.expirationDate) : null, notes: b.notes ?? null },
          contextOf(request),
        );
        await request.settle(position);
        await mailSupport(request, user, `Enterprise trial started by ${user.username}`, {
          From: senderOf(user),
          Organization: organizationId,
          'Use case': b.useCase,
          'ML models in production': b.userHasMLModelsInProduction,
          Company: b.companyName,
          'Company size': b.companySize,
          Country: b.country,
        });
        return { id: organizationId, userId: user.id };
      },
    }),
    operation({
      operationId: 'listEnterpriseTrialsUser',
      method: 'get',
      path: '/api/users/:userId/trials',
      summary: `A user's enterprise trials${BY_ID_SUMMARY}`,
      auth: 'jwt',
      authorize: authorizeSelfOrStaff(deps.settings.staffUsernames),
      async handler(request) {
        const target = await targetOf(request);
        return { trials: (await deps.users.trials(target.id)).map(trialView) };
      },
    }),
  ];
}
