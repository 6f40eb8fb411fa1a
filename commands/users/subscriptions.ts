import { createHmac, timingSafeEqual } from 'node:crypto';
import { UnauthorizedError } from '../../domain/shared/errors';
import type { EventStore, Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';
import { newCheckoutId } from './secrets';
import { runUserCommand } from './userCommands';

/** Starts a checkout; the user is sent to the payment portal with its id. */
export async function startCheckout(events: EventStore, userId: number, portalUrl: string, ctx: CommandContext): Promise<{ redirectUrl: string; position: Position }> {
  const checkoutId = newCheckoutId();
  const { appended } = await runUserCommand(events, userId, { type: 'StartSubscriptionCheckout', data: { checkoutId, now: ctx.now } }, ctx);
  const url = new URL(portalUrl);
  url.searchParams.set('checkout', checkoutId);
  url.searchParams.set('user', String(userId));
  return { redirectUrl: url.toString(), position: appended!.position };
}

/** `sha256=<hex HMAC-SHA256 of the raw body>` with the shared secret; compared in constant time. */
export function verifyBodySignature(rawBody: string, header: string | undefined, secret: string): void {
  const given = /^sha256=([0-9a-f]{64})$/i.exec(header?.trim() ?? '')?.[1];
  const expected = createHmac('sha256', secret).update(rawBody, 'utf8').digest();
  if (!given || !timingSafeEqual(Buffer.from(given, 'hex'), expected)) throw new UnauthorizedError('Invalid or missing signature', 'BAD_SIGNATURE');
}

export const signBody = (rawBody: string, secret: string): string => `sha256=${createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex')}`;
