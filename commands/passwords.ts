import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// scrypt from node:crypto: memory-hard, built in, no native addon to build.
const scrypt = (password: string, salt: Buffer, keylen: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCb(password, salt, keylen, options, (error, key) => (error ? reject(error) : resolve(key))),
  );

/** The cost new hashes are made with in production. */
export const PRODUCTION_SCRYPT_COST = { N: 16384, r: 8, p: 1 } as const;

/**
 * The cost for new hashes: production's, unless NODE_ENV is `test` and EDGE_ML_TEST_SCRYPT_N names a
 * lower power of two (the test suite signs up and logs in hundreds of users; at production's cost
 * each hash takes a tenth of a second of CPU). Stored hashes carry their own cost, so a hash made
 * at either cost verifies under both.
 */
export function scryptCost(env: NodeJS.ProcessEnv): { N: number; r: number; p: number } {
  const n = Number(env.EDGE_ML_TEST_SCRYPT_N);
  if (env.NODE_ENV !== 'test' || !Number.isInteger(n) || n < 2 || n > PRODUCTION_SCRYPT_COST.N || (n & (n - 1)) !== 0) return { ...PRODUCTION_SCRYPT_COST };
  return { ...PRODUCTION_SCRYPT_COST, N: n };
}

const PARAMS = scryptCost(process.env);

/** `scrypt$N$r$p$salt$hash`, salt and hash in base64. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, 32, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await scrypt(password, Buffer.from(salt, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p) });
  return timingSafeEqual(key, expected);
}

/** Used when no user matches, so that a wrong username takes as long as a wrong password. */
export const DUMMY_PASSWORD_HASH = `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`;
