import { randomBytes } from 'node:crypto';
import { Binary, MongoClient, type Collection } from 'mongodb';
import type { KeyStore } from './keyStore';

interface KeyDocument {
  _id: string;
  key: Binary;
}

/**
 * Keys in a database of their own, so that dropping the read models for a rebuild never
 * touches them.
 */
export class MongoKeyStore implements KeyStore {
  private constructor(
    private readonly client: MongoClient,
    private readonly keys: Collection<KeyDocument>,
    private readonly destroyed: Collection<{ _id: string }>,
  ) {}

  static async connect(url: string, dbName = 'edge_ml_keys'): Promise<MongoKeyStore> {
    const client = await MongoClient.connect(url);
    const db = client.db(dbName);
    return new MongoKeyStore(client, db.collection<KeyDocument>('subject_keys'), db.collection<{ _id: string }>('destroyed_subjects'));
  }

  async getOrCreate(subject: string): Promise<Buffer> {
    // $setOnInsert: racing writers agree on the first key written. Concurrent upserts of one _id
    // may fail with a duplicate key error; the loser then reads the winner's key.
    try {
      await this.keys.updateOne({ _id: subject }, { $setOnInsert: { key: new Binary(randomBytes(32)) } }, { upsert: true });
    } catch (error) {
      if ((error as { code?: number }).code !== 11000) throw error;
    }
    return (await this.get(subject))!;
  }

  async get(subject: string): Promise<Buffer | undefined> {
    const doc = await this.keys.findOne({ _id: subject });
    return doc ? Buffer.from(doc.key.buffer) : undefined;
  }

  async destroy(subject: string): Promise<void> {
    await this.destroyed.updateOne({ _id: subject }, { $set: { _id: subject } }, { upsert: true });
    await this.keys.deleteOne({ _id: subject });
  }

  async wasDestroyed(subject: string): Promise<boolean> {
    return (await this.destroyed.findOne({ _id: subject })) !== null;
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
