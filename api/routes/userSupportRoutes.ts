// What a user asks the support team (`/api/users/:userId/...`): feedback, and an upgrade to
// enterprise. Each is an e-mail to the support address about the user; the organization's trial
// extension request is in organizationRoutes.
import { z } from 'zod';
import { senderOf } from '../../commands/users/accountMail';
import type { ApiDeps } from '../apiDeps';
import { authorizeSelfOrStaff } from '../auth/userTarget';
import { operation, type Operation } from '../http/operation';
import { EnterpriseUpgradeOrTrialExtensionRequest } from './organizationRoutes';
import { BY_ID_SUMMARY, userRequests } from './userRequests';

/** JWT only: a user writes as themselves; a staff user may write for another. */
export function userSupportOperations(deps: ApiDeps): Operation[] {
  const { targetOf, mailSupport } = userRequests(deps);
  return [
    operation({
      operationId: 'sendUserFeedback',
      method: 'post',
      path: '/api/users/:userId/feedback',
      summary: `Send feedback to the support team${BY_ID_SUMMARY}`,
      auth: 'jwt',
      authorize: authorizeSelfOrStaff(deps.settings.staffUsernames),
      body: z.object({
        type: z.literal('feedback'),
        subject: z.string().min(1).max(500),
        body: z.string().min(1).max(20_000),
        workEmail: z.string().max(256).optional(),
        company: z.string().max(256).optional(),
        jobTitle: z.string().max(256).optional(),
        companySize: z.string().max(64).optional(),
        organizationId: z.number().int().optional(),
      }),
      async handler(request) {
        const target = await targetOf(request);
        const b = request.body;
        return mailSupport(request, target, `Feedback: ${b.subject}`, {
          From: senderOf(target),
          'Reply to': b.workEmail ?? target.email ?? undefined,
          Company: b.company,
          'Job title': b.jobTitle,
          'Company size': b.companySize,
          Organization: b.organizationId,
          Message: b.body,
        });
      },
    }),
    operation({
      operationId: 'sendUserUpgradeRequest',
      method: 'post',
      path: '/api/users/:userId/upgrade',
      summary: `Ask the support team for an upgrade to enterprise${BY_ID_SUMMARY}`,
      auth: 'jwt',
      authorize: authorizeSelfOrStaff(deps.settings.staffUsernames),
      body: EnterpriseUpgradeOrTrialExtensionRequest,
      async handler(request) {
        const target = await targetOf(request);
        const b = request.body;
        return mailSupport(request, target, `Enterprise upgrade request from ${target.username}`, {
          From: senderOf(target),
          'Reply to': target.email ?? undefined,
          Reason: b.reason,
          'Use case': b.useCase,
          Timeline: b.timeline,
          Objective: b.objective,
          Trial: b.trialId,
        });
      },
    }),
  ];
}
