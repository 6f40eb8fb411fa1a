import { importSPKI, jwtVerify, type CryptoKey } from 'jose';
import { z } from 'zod';
import { UnauthorizedError } from '../../domain/shared/errors';

/** How an identity provider is configured (SSO_IDENTITY_PROVIDERS is a JSON array of these). */
export const IdentityProviderConfig = z.object({
  name: z.string().min(1).max(64),
  /** E-mail domains whose users sign in through this provider. */
  domains: z.array(z.string().min(1)).min(1),
  /** The provider's public key (PEM, SPKI) that signs its access tokens. */
  publicKey: z.string().min(1),
  algorithm: z.enum(['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'PS256', 'EdDSA']).default('RS256'),
  issuer: z.string().optional(),
  audience: z.string().optional(),
});
export type IdentityProviderConfig = z.infer<typeof IdentityProviderConfig>;

export interface IdentityProvider extends Omit<IdentityProviderConfig, 'publicKey'> {
  key: CryptoKey;
}

export async function loadIdentityProviders(configs: readonly IdentityProviderConfig[]): Promise<IdentityProvider[]> {
  return Promise.all(configs.map(async ({ publicKey, ...c }) => ({ ...c, domains: c.domains.map((d) => d.toLowerCase()), key: await importSPKI(publicKey, c.algorithm) })));
}

const domainOf = (email: string): string => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

export const providersForEmail = (providers: readonly IdentityProvider[], email: string): IdentityProvider[] =>
  providers.filter((p) => p.domains.includes(domainOf(email)));

/**
 * Checks an access token signed by the provider (`jose`) and that it speaks for this e-mail
 * address, which must belong to one of the provider's domains.
 */
export async function verifyAccessToken(provider: IdentityProvider, token: string, email: string): Promise<void> {
  if (!provider.domains.includes(domainOf(email))) throw new UnauthorizedError(`${provider.name} does not sign in users of ${domainOf(email)}`, 'WRONG_IDP');
  let claims: Record<string, unknown>;
  try {
    ({ payload: claims } = await jwtVerify(token, provider.key, {
      algorithms: [provider.algorithm],
      ...(provider.issuer ? { issuer: provider.issuer } : {}),
      ...(provider.audience ? { audience: provider.audience } : {}),
    }));
  } catch {
    throw new UnauthorizedError('Invalid or expired access token', 'INVALID_ACCESS_TOKEN');
  }
  if (typeof claims.email !== 'string' || claims.email.toLowerCase() !== email.toLowerCase()) {
    throw new UnauthorizedError('The access token is not for this user', 'INVALID_ACCESS_TOKEN');
  }
}
