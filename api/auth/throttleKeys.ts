import { isIPv6 } from 'node:net';
import type { UserDocument } from '../../projections/users/userDocument';

/**
 * What the throttles count a name under: the account it resolves to, so that its username and its
 * e-mail in any case share one count; a name that resolves to no one counts on its own, lowercased.
 */
export const accountKey = (user: UserDocument | null, typed: string): string => (user ? `user:${user.id}` : `name:${typed.trim().toLowerCase()}`);

/**
 * The address a throttle counts a client under, from Koa's `ctx.ip`. The API app runs with
 * `proxy: false`, so that is the socket's peer and `X-Forwarded-For` is never believed: a client
 * cannot pick its own address. IPv4-mapped IPv6 is shown as IPv4; other IPv6 addresses count by
 * their /64, since one subscriber commonly holds a whole /64 and could otherwise change address at will.
 */
export function clientAddress(ip: string): string {
  const plain = ip.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  if (plain === '') return 'unknown';
  if (!isIPv6(plain)) return plain;
  return `${expandIPv6(plain).slice(0, 4).join(':')}::/64`;
}

/** The eight hextets of an IPv6 address (zone and embedded IPv4 tail folded in), lowercase, without leading zeros. */
function expandIPv6(address: string): string[] {
  let text = address.replace(/%.*$/, '').toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((h) => parseInt(h, 16).toString(16));
}
