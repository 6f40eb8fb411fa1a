import { describe, expect, it } from 'vitest';
import { DUMMY_PASSWORD_HASH, PRODUCTION_SCRYPT_COST, hashPassword, scryptCost, verifyPassword } from '../../commands/passwords';

describe('scrypt cost', () => {
  it("is production's N=16384 r=8 p=1 unless a test lowers it", () => {
    expect(PRODUCTION_SCRYPT_COST).toEqual({ N: 16384, r: 8, p: 1 });
    expect(scryptCost({})).toEqual({ N: 16384, r: 8, p: 1 });
    expect(scryptCost({ NODE_ENV: 'test' })).toEqual({ N: 16384, r: 8, p: 1 });
  });

  it('is lowered only under NODE_ENV=test, and only to a smaller power of two', () => {
    expect(scryptCost({ NODE_ENV: 'test', EDGE_ML_TEST_SCRYPT_N: '1024' })).toEqual({ N: 1024, r: 8, p: 1 });
    for (const env of ['production', 'development', undefined]) expect(scryptCost({ NODE_ENV: env, EDGE_ML_TEST_SCRYPT_N: '1024' }).N).toBe(16384);
    for (const n of ['1000', '0', '1', '-1024', '32768', 'abc', '']) expect(scryptCost({ NODE_ENV: 'test', EDGE_ML_TEST_SCRYPT_N: n }).N).toBe(16384);
  });

  it('verifies a hash at the cost it names, so hashes made at production cost still verify here', async () => {
    const productionHash = 'scrypt$16384$8$1$c2FsdHNhbHRzYWx0c2FsdA==$' + (await import('node:crypto')).scryptSync('s3cret-pass', Buffer.from('c2FsdHNhbHRzYWx0c2FsdA==', 'base64'), 32, PRODUCTION_SCRYPT_COST).toString('base64');
    expect(await verifyPassword('s3cret-pass', productionHash)).toBe(true);
    expect(await verifyPassword('s3cret-pasS', productionHash)).toBe(false);
  });

  it('checks an unknown name at the same cost as a real password, so neither answers sooner', async () => {
    const own = (await hashPassword('x')).split('$').slice(0, 4);
    expect(DUMMY_PASSWORD_HASH.split('$').slice(0, 4)).toEqual(own);
  });
});
