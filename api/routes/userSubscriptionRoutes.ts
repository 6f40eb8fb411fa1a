// The signed-in user's paid subscription (`/api/user/subscription/...`): starting one at the
// payment portal, cancelling it at the end of the period or keeping it after all, and its metrics.
// The portal's notifications arrive at paymentRoutes.
import { z } from 'zod';
import { startCheckout } from '../../commands/users/subscriptions';
import { ForbiddenError } from '../../domain/shared/errors';
import type { ApiDeps } from '../apiDeps';
import { operation, type Operation } from '../http/operation';
import { userRequests } from './userRequests';

/** JWT only. */
export function userSubscriptionOperations(deps: ApiDeps): Operation[] {
  const { run, contextOf } = userRequests(deps);
  return [
    operation({
      operationId: 'userUpgradeSubscription',
      method: 'post',
      path: '/api/user/subscription/upgrade',
      summary: 'Start a subscription: answers 302 to the payment portal with a checkout id',
      auth: 'jwt',
      body: z.object({ redirectUrlOrigin: z.string().optional(), redirectUrlQueryParams: z.string().optional() }).passthrough(),
      async handler(request) {
        const { redirectUrl, position } = await startCheckout(deps.events, request.user.id, deps.settings.paymentPortalUrl, contextOf(request));
        await request.settle(position);
        request.ctx.state.redirect = redirectUrl;
        return { redirectUrl };
      },
    }),
    operation({
      operationId: 'userCancelSubscription',
      method: 'post',
      path: '/api/user/subscription/cancel',
      summary: 'Cancel the subscription at the end of the billing period',
      auth: 'jwt',
      body: z.object({ reason: z.string().max(2000).optional() }).passthrough(),
      handler: (request) => run(request, request.user, { type: 'CancelSubscription', data: { reason: request.body.reason ?? null, now: new Date() } }),
    }),
    operation({
      operationId: 'userUndoCancelSubscription',
      method: 'post',
      path: '/api/user/subscription/undo-cancel',
      summary: 'Keep the subscription after all, before the billing period ends',
      auth: 'jwt',
      handler: (request) => run(request, request.user, { type: 'UndoCancelSubscription', data: { now: new Date() } }),
    }),
    operation({
      operationId: 'userGetSubscriptionMetrics',
      method: 'get',
      path: '/api/user/subscription/metrics',
      summary: 'Billable compute metrics; only with an active subscription',
      auth: 'jwt',
      async handler({ user }) {
        const s = user.subscription;
        if (s.status !== 'active' && s.status !== 'cancellation-pending') {
          throw new ForbiddenError('Subscription metrics are available only with an active subscription', 'NO_SUBSCRIPTION');
        }
        // Jobs do not exist yet: nothing has been billed in this period.
        return {
          totalComputeTimeThisPeriodSeconds: 0,
          computeTimeCurrentPeriodStart: s.periodStart ?? undefined,
          computeTimeCurrentPeriodEnd: s.periodEnd ?? undefined,
          totalStorageSizeBytes: 0,
          totalProjectsCount: (await deps.projects.forCollaborator(user.id)).length,
        };
      },
    }),
  ];
}
