import { describe, expect, it } from 'vitest';
import type { KeyStore } from '../../stores/keystore/keyStore';
import { MongoKeyStore } from '../../stores/keystore/mongoKeyStore';
import { SqliteKeyStore } from '../../stores/keystore/sqliteKeyStore';
import { mongoSkipReason, mongoUrl, testDatabase } from '../support/mongoTestDatabases';

const keysDb = testDatabase('test_keys');

const adapters: { name: string; open: () => Promise<KeyStore>; skipReason?: string }[] = [
  { name: 'SqliteKeyStore', open: async () => SqliteKeyStore.open(':memory:') },
  {
    name: 'MongoKeyStore',
    open: () => MongoKeyStore.connect(mongoUrl!, keysDb),
    ...(mongoSkipReason ? { skipReason: mongoSkipReason } : {}),
  },
];

for (const adapter of adapters) {
  const suite = adapter.skipReason ? describe.skip : describe;
  suite(`${adapter.name}${adapter.skipReason ? ` (skipped: ${adapter.skipReason})` : ''}`, () => {
    it('creates a 32-byte key once and gives the same key afterwards', async () => {
      const keys = await adapter.open();
      const a = await keys.getOrCreate('user-1');
      expect(a).toHaveLength(32);
      expect(await keys.getOrCreate('user-1')).toEqual(a);
      expect(await keys.get('user-1')).toEqual(a);
      expect(await keys.getOrCreate('user-2')).not.toEqual(a);
      await keys.close();
    });

    it('answers undefined for an unknown subject and after destroying one', async () => {
      const keys = await adapter.open();
      expect(await keys.get('nobody')).toBeUndefined();
      await keys.getOrCreate('user-3');
      await keys.destroy('user-3');
      expect(await keys.get('user-3')).toBeUndefined();
      await keys.close();
    });
  });
}
