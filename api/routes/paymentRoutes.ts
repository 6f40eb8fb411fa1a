import { z } from 'zod';
import { verifyBodySignature } from '../../commands/users/subscriptions';
import { runUserCommand } from '../../commands/users/userCommands';
import { NotFoundError, ServiceUnavailableError } from '../../domain/shared/errors';
import type { ApiDeps } from '../apiDeps';
import { operation, type Operation } from '../http/operation';

const PaymentNotification = z.object({
  type: z.literal('checkout.completed'),
  checkoutId: z.string().min(1).max(128),
  userId: z.number().int().positive(),
  periodStart: z.iso.datetime({ offset: true }),
  periodEnd: z.iso.datetime({ offset: true }),
});

/**
 * The payment provider's notification that a checkout was paid (not in the spec: the provider's
 * side of `subscription/upgrade`). Its body is signed: header `x-payment-signature: sha256=<hex
 * HMAC-SHA256 of the raw body>` made with PAYMENT_WEBHOOK_SECRET.
 */
export function paymentOperations(deps: ApiDeps): Operation[] {
  return [
    operation({
      operationId: 'paymentNotification',
      method: 'post',
      path: '/api/payments/notification',
      summary: 'A signed payment notification: activates the subscription with its billing period',
      auth: 'none',
      body: PaymentNotification,
      async handler({ ctx, body, requestId, settle }) {
        const secret = deps.settings.paymentWebhookSecret;
        if (!secret) throw new ServiceUnavailableError('Payments are not configured on this installation (PAYMENT_WEBHOOK_SECRET)');
        verifyBodySignature(ctx.request.rawBody ?? '', ctx.get('x-payment-signature'), secret);
        const user = await deps.users.byId(body.userId);
        if (!user) throw new NotFoundError(`User ${body.userId} not found`, 'USER_NOT_FOUND');
        const now = new Date();
        const { appended } = await runUserCommand(
          deps.events,
          user.id,
          { type: 'ActivateSubscription', data: { checkoutId: body.checkoutId, periodStart: new Date(body.periodStart), periodEnd: new Date(body.periodEnd), now } },
          { actor: 'system:payments', correlationId: requestId, causationId: body.checkoutId, now },
        );
        if (appended) await settle(appended.position);
        return {};
      },
    }),
  ];
}
