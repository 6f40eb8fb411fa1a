import { isIP, isIPv6 } from 'node:net';
import type { UserDocument } from '../../projections/users/userDocument';

/**
 * What the throttles count a name under: the account it resolves to, so that its username and its
 * e-mail in any case share one count; a name that resolves to no one counts on its own, lowercased.
 */
export const accountKey = (user: UserDocument | null, typed: string): string => (user ? `user:${user.id}` : `name:${typed.trim().toLowerCase()}`);

/** What the address is read from: Koa's context (or request). */
export interface ClientRequest {
  ip: string;
  get(field: string): string;
}

/**
 * The address a throttle counts a client under. The API app runs with Koa's `proxy: false`, so
 * `ip` is the socket's peer and no header can choose it. Behind `trustedProxyHops` reverse proxies
 * (the `TRUSTED_PROXY_HOPS` setting), the entry of `X-Forwarded-For` that the outermost trusted proxy
 * appended is taken instead: that many entries from the right, where a client's own entries cannot
 * reach. An entry that is not an IP address (only a misconfigured proxy sends one) is not believed.
 * IPv4-mapped IPv6 is shown as IPv4; other IPv6 addresses count by their /64, since one subscriber
 * commonly holds a whole /64 and could otherwise change address at will.
 */
export function clientAddress(request: ClientRequest, trustedProxyHops = 0): string {
  let ip = request.ip;
  if (trustedProxyHops > 0) {
    const entries = request
      .get('x-forwarded-for')
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean);
    const forwarded = entries[Math.max(0, entries.length - trustedProxyHops)];
    if (forwarded !== undefined && isIP(forwarded)) ip = forwarded;
  }
  return addressKey(ip);
}

function addressKey(ip: string): string {
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
