import type { Position } from '../../stores/eventstore/eventStore';
import type { CommandContext } from '../commandContext';

export interface OutgoingEmail {
  userId: number | null;
  to: string;
  subject: string;
  bodyText: string;
  bodyHTML: string;
}

/** Queues an e-mail (an event; a saga delivers it). */
export type SendEmail = (email: OutgoingEmail, ctx: CommandContext) => Promise<{ position: Position }>;

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function message(userId: number | null, to: string, subject: string, lines: string[]): OutgoingEmail {
  return {
    userId,
    to,
    subject,
    bodyText: lines.join('\n\n'),
    bodyHTML: lines.map((l) => `<p>${escape(l)}</p>`).join('\n'),
  };
}

export const activationEmail = (userId: number, to: string, name: string, code: string) =>
  message(userId, to, 'Activate your account', [
    `Hi ${name},`,
    `Your activation code is: ${code}`,
    'Enter it to activate your account. It is valid for 24 hours; you can ask for a new one at any time.',
  ]);

export const passwordResetEmail = (userId: number, to: string, name: string, code: string) =>
  message(userId, to, 'Reset your password', [
    `Hi ${name},`,
    `Your password reset code is: ${code}`,
    'It is valid for one hour. If you did not ask to reset your password, ignore this e-mail: your password stays as it is.',
  ]);

/** A request for the support team (feedback, upgrade, trial), sent to the configured support address. */
export function supportRequestEmail(userId: number, supportAddress: string, subject: string, fields: Record<string, string | number | undefined>): OutgoingEmail {
  const lines = Object.entries(fields)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `${k}: ${String(v)}`);
  return message(userId, supportAddress, subject, lines);
}

/** How a support request names who sent it. */
export const senderOf = (user: { id: number; username: string; name: string | null }): string => `${user.name ?? user.username} (${user.username}, user ${user.id})`;
