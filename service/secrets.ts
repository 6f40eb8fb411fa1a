// The secrets and certificates the service prepares at start, apart from the roles that use them:
// the JWT signing secret (api role) and the ingestion API's TLS certificate (ingestion role).
// Either comes from the configuration, else is made once in the data folder and kept there, so that
// a restart keeps tokens valid and devices keep trusting the same certificate.
import { createHmac, generateKeyPairSync, randomBytes } from 'node:crypto';
import type { JsonWebKey } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, link, mkdir, open, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { generate as generateCertificate } from 'selfsigned';
import type { Config } from './configuration';

/**
 * Makes `file` with `content` (owner-only) unless it exists, so that it is never seen part-written:
 * the content is written and synced under a name of its own, then linked into place, which fails
 * if another process on the folder linked its own first (the first one wins, and is what both read).
 * A crash leaves at most a stray temporary file, never a short `file`. On a filesystem without hard
 * links (vfat, some network shares) it falls back to an exclusive create of `file` itself.
 */
export async function createOnce(file: string, content: string, linkFile: (from: string, to: string) => Promise<void> = link): Promise<void> {
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  let linked = true;
  try {
    await linkFile(temporary, file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'ENOSYS') linked = false;
    else if (code !== 'EEXIST') throw error;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
  if (linked) return;
  await writeFile(file, content, { mode: 0o600, flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
}

/** JWT_SECRET, else the data folder's `jwt-secret` (made by the first process; owner-only). */
export async function jwtSecret(config: Pick<Config, 'jwtSecret' | 'dataDir'>): Promise<string> {
  if (config.jwtSecret) return config.jwtSecret;
  const file = path.join(config.dataDir, 'jwt-secret');
  if (!existsSync(file)) await createOnce(file, randomBytes(48).toString('base64url'));
  const secret = (await readFile(file, 'utf8')).trim();
  // Tokens signed with a short or empty secret could be forged: such a file is refused, not used.
  if (secret.length < 32) throw new Error(`${file} holds no usable secret (${secret.length} characters; at least 32): restore it from a backup, or remove it to make a new one (every session ends)`);
  return secret;
}

/** The configured certificate, else a self-signed one made once in the data folder. */
export async function tlsCredentials(config: Pick<Config, 'tlsCertFile' | 'tlsKeyFile' | 'dataDir'>, log: Logger): Promise<{ cert: string; key: string }> {
  if (config.tlsCertFile && config.tlsKeyFile) {
    return { cert: await readFile(config.tlsCertFile, 'utf8'), key: await readFile(config.tlsKeyFile, 'utf8') };
  }
  const dir = path.join(config.dataDir, 'tls');
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  if (!existsSync(certFile) || !existsSync(keyFile)) {
    await mkdir(dir, { recursive: true });
    const notAfterDate = new Date(Date.now() + 825 * 24 * 3600 * 1000);
    const pems = await generateCertificate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      notAfterDate,
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] },
      ],
    });
    await writeFile(keyFile, pems.private, { mode: 0o600 });
    await writeFile(certFile, pems.cert);
    await chmod(keyFile, 0o600);
    log.info({ certFile }, 'made a self-signed certificate for the ingestion API');
  }
  return { cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8') };
}

/** What the OAuth authorization server signs with (docs/oauth.md): its cookies' keys and the ID tokens' RSA key. */
export interface OAuthServerKeys {
  cookieKeys: string[];
  /** A private JWK (RS256): never in the log, only in the data folder. */
  signingKey: JsonWebKey & { kty: string };
}

/**
 * The cookie key is derived from the JWT secret (one secret less to keep); the signing key is made
 * once in the data folder's `oauth-signing-key.json` (owner-only), the first process's winning.
 */
export async function oauthServerKeys(config: Pick<Config, 'jwtSecret' | 'dataDir'>): Promise<OAuthServerKeys> {
  const cookieKeys = [createHmac('sha256', await jwtSecret(config)).update('oauth-cookies').digest('base64url')];
  const file = path.join(config.dataDir, 'oauth-signing-key.json');
  if (!existsSync(file)) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = { ...privateKey.export({ format: 'jwk' }), kid: randomBytes(9).toString('base64url'), use: 'sig', alg: 'RS256' };
    await createOnce(file, JSON.stringify(jwk));
  }
  let signingKey: OAuthServerKeys['signingKey'];
  try {
    signingKey = JSON.parse(await readFile(file, 'utf8')) as OAuthServerKeys['signingKey'];
    if (signingKey.kty !== 'RSA' || typeof signingKey.d !== 'string') throw new Error('not a private RSA key');
  } catch (error) {
    throw new Error(`${file} holds no usable signing key (${(error as Error).message}): restore it from a backup, or remove it to make a new one (ID tokens already issued can no longer be verified)`);
  }
  return { cookieKeys, signingKey };
}
