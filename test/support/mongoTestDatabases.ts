import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { afterAll } from 'vitest';

/** MongoDB (FerretDB in CI) is used when MONGO_URL is set; suites that need it say so when it is not. */
export const mongoUrl = process.env.MONGO_URL;
export const mongoSkipReason = mongoUrl ? undefined : 'MONGO_URL is not set';

export async function dropMongoDatabases(names: readonly string[]): Promise<void> {
  if (!mongoUrl || names.length === 0) return;
  const client = await MongoClient.connect(mongoUrl);
  try {
    for (const name of names) await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}

/** A fresh database name for this test file, dropped when the file's tests are done. */
export function testDatabase(prefix: string): string {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  afterAll(() => dropMongoDatabases([name]));
  return name;
}
