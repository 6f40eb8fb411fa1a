// The SQLite read store against the contract, in a private in-memory database per test; once
// without declared indexes (mingo decides everything on full scans) and once with indexes on the
// contract's fields, so that SQL answers (filters, sorts, paging, counts) are held to the same results.
import type { ReadModelIndexes } from '../../stores/readstore/indexDeclarations';
import { SqliteReadStore } from '../../stores/readstore/sqliteReadStore';
import { readStoreContract } from './readStore.contract';

readStoreContract('SqliteReadStore', async () => SqliteReadStore.open(':memory:'));

const contractIndexes: ReadModelIndexes = {
  samples: [
    { keys: { label: 1, length: -1 } },
    { keys: { length: 1 } },
    { keys: { 'device.kind': 1, _id: 1 } },
    { keys: { 'windows.start': 1 } },
    { keys: { tags: 1 }, array: true },
  ],
  projects: [{ keys: { owner: 1 } }, { keys: { _position: 1 } }, { keys: { name: 1 } }],
  lists: [{ keys: { values: 1 }, array: true }],
};
readStoreContract('SqliteReadStore with declared indexes', async () => SqliteReadStore.open(':memory:', { indexes: contractIndexes }));
