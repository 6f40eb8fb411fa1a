import { ValidationError } from '../shared/errors';

export const MAX_REDIRECT_URIS = 10;
export const MAX_REDIRECT_URI_LENGTH = 2000;

// Loopback hosts, as `URL.hostname` spells them, where a native or development client may listen on plain http.
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

// Blanks and control characters (and the invisible formatting characters that reorder what a person
// reads) are refused rather than dropped: the URL parser strips some of them silently, and redirect
// URIs are compared as exact strings, so what is stored must be exactly what the client will send.
const REFUSED = /[\s\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/u;

/**
 * Why `uri` cannot be an OAuth redirect URI, or undefined when it can: an absolute http(s) URL
 * without a fragment or credentials, https unless its host is a loopback one (RFC 6749 3.1.2,
 * RFC 8252 7.3, OAuth 2.0 Security BCP 2.1).
 */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return `is ${uri.length} characters long; at most ${MAX_REDIRECT_URI_LENGTH} characters are allowed`;
  if (REFUSED.test(uri)) return 'contains spaces or control characters';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https URL';
  // `URL.hash` is empty for a bare `#`: look at the text.
  if (uri.includes('#')) return 'must not have a fragment (#...)';
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) return 'must use https (http only on localhost, 127.0.0.1 or [::1])';
  return undefined;
}

/** The redirect URIs as given, once each checked; a ValidationError naming the first refused one otherwise. */
export function checkRedirectUris(uris: readonly string[]): string[] {
  const field = 'Redirect URIs ("redirectUris")';
  if (uris.length === 0) throw new ValidationError(`${field} must list at least one URI`);
  if (uris.length > MAX_REDIRECT_URIS) throw new ValidationError(`${field} lists ${uris.length} URIs; at most ${MAX_REDIRECT_URIS} are allowed`);
  const seen = new Set<string>();
  for (const [i, uri] of uris.entries()) {
    const problem = redirectUriProblem(uri);
    if (problem !== undefined) throw new ValidationError(`Redirect URI ${i + 1} ${problem}`, 'INVALID_REDIRECT_URI');
    if (seen.has(uri)) throw new ValidationError(`Redirect URI ${i + 1} is listed twice: "${uri}"`, 'INVALID_REDIRECT_URI');
    seen.add(uri);
  }
  return [...uris];
}
