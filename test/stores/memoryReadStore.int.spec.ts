import { MemoryReadStore } from '../../stores/readstore/memoryReadStore';
import { readStoreContract } from './readStore.contract';

readStoreContract('MemoryReadStore', async () => new MemoryReadStore());
