import { hashApiKey } from '../../domain/project/apiKeys';
import type { ReadStore } from '../../stores/readstore/readStore';
import { API_KEYS, type ApiKeyDocument } from './apiKeyDocument';

export class ApiKeyQueries {
  constructor(private readonly store: ReadStore) {}

  private get keys() {
    return this.store.collection<ApiKeyDocument>(API_KEYS);
  }

  /** The project's keys that are not revoked (expired ones included: they are listed with their date). */
  forProject(projectId: number): Promise<ApiKeyDocument[]> {
    return this.keys.find({ projectId, revoked: false }, { sort: { created: 1, apiKeyId: 1 } });
  }

  /** Whether any key ever had this hash, live or not: a key value is never issued twice. */
  async everIssued(hash: string): Promise<boolean> {
    return (await this.keys.findOne({ _id: hash })) !== null;
  }

  /** The live key with this value, or null when unknown, revoked or expired. */
  async live(key: string, now: Date): Promise<ApiKeyDocument | null> {
    const doc = await this.keys.findOne({ _id: hashApiKey(key), revoked: false, projectDeleted: false });
    return doc && isLive(doc, now) ? doc : null;
  }

  /** The key with this id, live or not (for a grant recorded by id: a socket token's). */
  byId(apiKeyId: number): Promise<ApiKeyDocument | null> {
    return this.keys.findOne({ apiKeyId });
  }
}

/** Whether the key works at `now`: not revoked, its project not deleted, not expired. */
export function isLive(doc: ApiKeyDocument, now: Date): boolean {
  return !doc.revoked && !doc.projectDeleted && !hasExpired(doc.expires, now);
}

/** A key's `expires` that has come (one that cannot be read counts as not come, as it always did). */
export const hasExpired = (expires: string | null, now: Date): boolean => expires !== null && Date.parse(expires) <= now.getTime();
