// Runs against MONGO_URL (MongoDB, or FerretDB in CI) in a database of its own, dropped at the end.
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterAll } from 'vitest';
import { MongoReadStore } from '../../stores/readstore/mongoReadStore';
import { readStoreContract } from './readStore.contract';

const url = process.env.MONGO_URL;
const dbName = `test_readstore_${randomBytes(6).toString('hex')}`;

readStoreContract('MongoReadStore', () => MongoReadStore.connect(url!, dbName), url ? undefined : 'MONGO_URL is not set');

afterAll(async () => {
  if (!url) return;
  const client = await MongoClient.connect(url);
  try {
    await client.db(dbName).dropDatabase();
  } finally {
    await client.close();
  }
});
