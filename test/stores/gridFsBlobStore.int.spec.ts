// Runs against MONGO_URL (MongoDB, or FerretDB in CI) in a database of its own, dropped at the end.
import { GridFsBlobStore } from '../../stores/blobstore/gridFsBlobStore';
import { mongoSkipReason, mongoUrl, testDatabase } from '../support/mongoTestDatabases';
import { blobStoreContract } from './blobStore.contract';

const dbName = testDatabase('test_blobstore');
blobStoreContract('GridFsBlobStore', () => GridFsBlobStore.connect(mongoUrl!, dbName), mongoSkipReason);
