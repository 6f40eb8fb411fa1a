// Runs against MONGO_URL (MongoDB, or FerretDB in CI) in a database of its own, dropped at the end.
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterAll } from 'vitest';
import { GridFsBlobStore } from '../../stores/blobstore/gridFsBlobStore';
import { blobStoreContract } from './blobStore.contract';

const url = process.env.MONGO_URL;
const dbName = `test_blobstore_${randomBytes(6).toString('hex')}`;

blobStoreContract('GridFsBlobStore', () => GridFsBlobStore.connect(url!, dbName), url ? undefined : 'MONGO_URL is not set');

afterAll(async () => {
  if (!url) return;
  const client = await MongoClient.connect(url);
  try {
    await client.db(dbName).dropDatabase();
  } finally {
    await client.close();
  }
});
