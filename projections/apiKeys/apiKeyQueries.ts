import { hashApiKey } from '../../domain/project/apiKeys';
import type { ReadStore } from '../../stores/readstore/readStore';
import { API_KEYS, type ApiKeyDocument } from './apiKeyDocument';

export class ApiKeyQueries {
  constructor(private readonly store: ReadStore) {}

  /** The live key with this value, or null when unknown, revoked or expired. */
  async live(key: string, now: Date): Promise<ApiKeyDocument | null> {
    const doc = await this.store.collection<ApiKeyDocument>(API_KEYS).findOne({ _id: hashApiKey(key), revoked: false });
    if (!doc || (doc.expires !== null && Date.parse(doc.expires) <= now.getTime())) return null;
    return doc;
  }
}
