// Creates the declared read-model indexes in a MongoDB database, at start and after a rebuild has
// dropped the collections. Only the missing ones are asked for: MongoDB takes a repeated
// createIndexes as a no-op, but FerretDB 1.24 drops the connection on one.
import { MongoClient, type Db } from 'mongodb';
import { assertIndexDeclarations, type ReadModelIndexes } from './indexDeclarations';

export async function createMongoIndexes(db: Db, indexes: ReadModelIndexes): Promise<void> {
  assertIndexDeclarations(indexes);
  for (const [collection, declarations] of Object.entries(indexes)) {
    if (declarations.length === 0) continue;
    const target = db.collection(collection);
    const existing = new Set((await target.listIndexes().toArray().catch(() => [])).map((index) => JSON.stringify(index.key)));
    const missing = declarations.filter((declaration) => !existing.has(JSON.stringify(declaration.keys)));
    // An array field needs nothing more: MongoDB makes an index on one multikey by itself.
    if (missing.length > 0) await target.createIndexes(missing.map((declaration) => ({ key: { ...declaration.keys } })));
  }
}

/** The same through a short-lived client of its own, for callers that hold only the URL. */
export async function ensureMongoIndexes(url: string, dbName: string, indexes: ReadModelIndexes): Promise<void> {
  const client = await MongoClient.connect(url);
  try {
    await createMongoIndexes(client.db(dbName), indexes);
  } finally {
    await client.close();
  }
}
