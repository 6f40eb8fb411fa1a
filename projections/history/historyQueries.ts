import { positionKey } from '../projection';
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

  /**
   * A page in log order (`_position` is the fixed-width position, as `_id`). A user's history is two
   * indexed queries merged: their own streams', and what they did.
   */
  async page(scope: HistoryScope, filter: HistoryFilter, limit: number): Promise<HistoryDocument[]> {
    const query: Filter = {};
    if (filter.type !== undefined) query.type = filter.type;
    if (filter.actor !== undefined) query.actor = filter.actor;
    if (filter.from !== undefined || filter.to !== undefined) {
      query.created = { ...(filter.from !== undefined ? { $gte: filter.from } : {}), ...(filter.to !== undefined ? { $lte: filter.to } : {}) };
    }
    if (filter.after !== undefined) query._position = { $gt: filter.after };
    const history = this.store.collection<HistoryDocument>(HISTORY);
    const find = (f: Filter) => history.find(f, { sort: { _position: 1 }, limit });
    if (scope.kind === 'project') return find({ projectId: scope.projectId, ...query });
    if (scope.kind === 'all') return find(query);
    const actor = `user:${scope.userId}`;
    if (filter.actor !== undefined && filter.actor !== actor) return find({ userId: scope.userId, ...query });
    const [own, done] = await Promise.all([find({ userId: scope.userId, ...query }), find({ ...query, actor })]);
    const merged = new Map([...own, ...done].map((d) => [d._id, d]));
    return [...merged.values()].sort((a, b) => (a._id < b._id ? -1 : 1)).slice(0, limit);
  }

  /** Whether the project ever had an event: its history outlives the project. */
  async projectExisted(projectId: number): Promise<boolean> {
    return (await this.store.collection<HistoryDocument>(HISTORY).findOne({ projectId })) !== null;
  }
}

/** Where a past view stops: a time (ISO), or a log position (a version stands at one), inclusive. */
export type HistoryBound = string | { position: bigint };

/** The documents matching `filter` up to `bound` (inclusive), page by page in log order. */
export async function* historyUpTo(store: ReadStore, filter: Filter, bound: HistoryBound, pageSize = 1000): AsyncGenerator<HistoryDocument> {
  let after: string | undefined;
  const upTo: Filter = typeof bound === 'string' ? { created: { $lte: bound } } : {};
  const last = typeof bound === 'string' ? undefined : positionKey(bound.position);
  for (;;) {
    const positions = { ...(after !== undefined ? { $gt: after } : {}), ...(last !== undefined ? { $lte: last } : {}) };
    const query: Filter = { ...filter, ...upTo, ...(Object.keys(positions).length > 0 ? { _position: positions } : {}) };
    const page = await store.collection<HistoryDocument>(HISTORY).find(query, { sort: { _position: 1 }, limit: pageSize });
    yield* page;
    if (page.length < pageSize) return;
    after = page.at(-1)!._position;
  }
}
