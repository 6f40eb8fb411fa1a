import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import { readStoreContract } from './readStore.contract';

readStoreContract('MemoryReadStore', async () => new MemoryReadStore());
// Every equality query through an index from the first document: the same contract must hold.
readStoreContract('MemoryReadStore with equality indexes at once', async () => new MemoryReadStore({ indexAfter: 0 }));
