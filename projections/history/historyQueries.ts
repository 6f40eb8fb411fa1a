import type { Filter, ReadStore } from '../../stores/readstore/readStore';
import { HISTORY, type HistoryDocument } from './historyDocument';

/** Whose history: one project's events, one user's (their account's and those they caused), or all. */
export type HistoryScope = { kind: 'project'; projectId: number } | { kind: 'user'; userId: number } | { kind: 'all' };

export interface HistoryFilter {
  type?: string;
  actor?: string;
  /** ISO times, inclusive. */
  from?: string;
  to?: string;
  /** Only events after this one (its `_id`, a position key). */
  after?: string;
}

export class HistoryQueries {
  constructor(private readonly store: ReadStore) {}

  /** A page in log order. */
  page(scope: HistoryScope, filter: HistoryFilter, limit: number): Promise<HistoryDocument[]> {
    const query: Filter = {};
    if (scope.kind === 'project') query.projectId = scope.projectId;
    if (scope.kind === 'user') query.$or = [{ userId: scope.userId }, { actor: `user:${scope.userId}` }];
    if (filter.type !== undefined) query.type = filter.type;
    if (filter.actor !== undefined) query.actor = filter.actor;
    if (filter.from !== undefined || filter.to !== undefined) {
      query.created = { ...(filter.from !== undefined ? { $gte: filter.from } : {}), ...(filter.to !== undefined ? { $lte: filter.to } : {}) };
    }
    if (filter.after !== undefined) query._id = { $gt: filter.after };
    return this.store.collection<HistoryDocument>(HISTORY).find(query, { sort: { _id: 1 }, limit });
  }

  /** Whether the project ever had an event: its history outlives the project. */
  async projectExisted(projectId: number): Promise<boolean> {
    return (await this.store.collection<HistoryDocument>(HISTORY).findOne({ projectId })) !== null;
  }
}

/** The documents matching `filter` up to `asOf` (inclusive), page by page in log order. */
export async function* historyUpTo(store: ReadStore, filter: Filter, asOf: string, pageSize = 1000): AsyncGenerator<HistoryDocument> {
  let after: string | undefined;
  for (;;) {
    const query: Filter = { ...filter, created: { $lte: asOf }, ...(after !== undefined ? { _id: { $gt: after } } : {}) };
    const page = await store.collection<HistoryDocument>(HISTORY).find(query, { sort: { _id: 1 }, limit: pageSize });
    yield* page;
    if (page.length < pageSize) return;
    after = page.at(-1)!._id;
  }
}
