// Runs against MONGO_URL (MongoDB, or FerretDB in CI) in a database of its own, dropped at the end.
import { MongoReadStore } from '../../stores/readstore/mongoReadStore';
import { mongoSkipReason, mongoUrl, testDatabase } from '../support/mongoTestDatabases';
import { readStoreContract } from './readStore.contract';

const dbName = testDatabase('test_readstore');
readStoreContract('MongoReadStore', () => MongoReadStore.connect(mongoUrl!, dbName), mongoSkipReason);
