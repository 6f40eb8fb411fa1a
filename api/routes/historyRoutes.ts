// The auditors' view: the events of a project, of a user, or of the whole log, in log
// order, with who did what, when, in which request. Pages come from the history read model; each
// event's data is read from the log, with secrets redacted and forgotten personal data marked.
import { z } from 'zod';
import type { HistoryReader } from '../../domain/audit/historyRedaction';
import { ForbiddenError, NotFoundError, ValidationError } from '../../domain/shared/errors';
import type { HistoryDocument } from '../../projections/history/historyDocument';
import { historyEntry, type HistoryEntry } from '../../projections/history/historyEntry';
import { eventKey, eventsOf } from '../../projections/history/historyEvents';
import type { StoredEvent } from '../../stores/eventstore/eventStore';
import type { HistoryFilter, HistoryScope } from '../../projections/history/historyQueries';
import { positionKey } from '../../projections/projection';
import type { ApiDeps } from '../apiDeps';
import type { Principal } from '../auth/principal';
import { isStaff } from '../auth/staff';
import { intParam, operation, type Operation } from '../http/operation';

const PAGE_MAX = 1000;

const isoTime = z.iso.datetime({ offset: true }).transform((t) => new Date(t).toISOString());

const HistoryQuery = z.object({
  limit: z.coerce.number().int().min(1).max(PAGE_MAX).default(100),
  cursor: z.string().max(200).optional(),
  type: z.string().min(1).max(128).regex(/^[A-Za-z]+$/, 'an event type is letters only').optional(),
  actor: z.string().min(1).max(128).regex(/^[a-z-]+:[\w.:-]+$/, 'an actor looks like user:42, apikey:7 or system:<component>').optional(),
  from: isoTime.optional(),
  to: isoTime.optional(),
});
type HistoryQuery = z.infer<typeof HistoryQuery>;

/** The cursor is the last position shown, opaque to clients: base64url of its fixed-width key. */
const cursorOf = (doc: HistoryDocument): string => Buffer.from(doc._id, 'utf8').toString('base64url');

function afterCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^\d{20}$/.test(key) || positionKey(BigInt(key)) !== key) throw new ValidationError('Invalid query parameters: "cursor" is not one this service gave (pass nextCursor as it came)', 'INVALID_CURSOR');
  return key;
}

const staff = (deps: ApiDeps, principal: Principal): boolean => principal.kind === 'user' && isStaff(principal.user, deps.settings.staffUsernames);

export function historyOperations(deps: ApiDeps): Operation[] {
  async function page(scope: HistoryScope, query: HistoryQuery): Promise<Record<string, unknown>> {
    if (query.from !== undefined && query.to !== undefined && query.from > query.to) {
      throw new ValidationError('Invalid query parameters: "from" is after "to"');
    }
    const filter: HistoryFilter = { type: query.type, actor: query.actor, from: query.from, to: query.to, after: afterCursor(query.cursor) };
    // One more than asked says whether there is a next page.
    const docs = await deps.history.page(scope, filter, query.limit + 1);
    const shown = docs.slice(0, query.limit);
    const stored = await eventsOf(deps.events, shown);
    const reader: HistoryReader = scope.kind === 'project' ? { kind: 'project' } : scope.kind === 'user' ? { kind: 'user', userId: scope.userId } : { kind: 'all' };
    const events = await Promise.all(shown.map((doc) => entryOf(doc, stored.get(eventKey(doc)), reader)));
    return { events, nextCursor: docs.length > query.limit ? cursorOf(shown.at(-1)!) : null };
  }

  async function entryOf(doc: HistoryDocument, event: StoredEvent | undefined, reader: HistoryReader): Promise<HistoryEntry> {
    if (event) return historyEntry(event, await deps.events.isForgotten(event), reader);
    // A stream deleted from the log (never done by this service) leaves the index with no event.
    const { position, streamId, type, created, actor, correlationId, causationId } = doc;
    return { position, streamId, type, created, actor, correlationId, causationId, data: null };
  }

  return [
    operation({
      operationId: 'getProjectHistory',
      method: 'get',
      path: '/api/:projectId/history',
      summary: "Every event of the project's aggregates in log order, with who did it, when and in which request",
      auth: 'any',
      checkProject: false,
      query: HistoryQuery,
      async authorize(principal, params) {
        const projectId = intParam(params, 'projectId');
        if (staff(deps, principal)) {
          if (!(await deps.history.projectExisted(projectId))) throw new NotFoundError(`Project ${projectId} not found`, 'PROJECT_NOT_FOUND');
          return;
        }
        if (principal.kind === 'apiKey') {
          if (principal.projectId !== projectId) throw new ForbiddenError(`This API key does not give access to project ${projectId}`);
          if (principal.role !== 'admin') throw new ForbiddenError(`An API key with role "${principal.role}" cannot read this project's history; it takes an admin key`);
          return;
        }
        if (principal.kind !== 'user') throw new ForbiddenError("An organization API key cannot read a project's history");
        const project = await deps.projects.byId(projectId);
        if (!project) throw new NotFoundError(`Project ${projectId} not found`, 'PROJECT_NOT_FOUND');
        if (!project.collaboratorIds.includes(principal.user.id)) throw new ForbiddenError(`You are not a collaborator on project ${projectId}`);
        if (project.ownerUserId !== principal.user.id) throw new ForbiddenError("Only the project's owner, its admin API keys and staff may read its history");
      },
      async handler({ params, query }) {
        return page({ kind: 'project', projectId: intParam(params, 'projectId') }, query);
      },
    }),
    operation({
      operationId: 'getUserHistory',
      method: 'get',
      path: '/api/users/:userId/history',
      summary: "The events of a user's account and every event they caused, in log order",
      auth: 'jwt',
      query: HistoryQuery,
      async authorize(principal, params) {
        const userId = intParam(params, 'userId');
        if (staff(deps, principal)) return;
        if (principal.kind !== 'user' || principal.user.id !== userId) throw new ForbiddenError("Only the user themself and staff may read a user's history");
      },
      async handler({ params, query }) {
        return page({ kind: 'user', userId: intParam(params, 'userId') }, query);
      },
    }),
    operation({
      operationId: 'getAuditEvents',
      method: 'get',
      path: '/api/audit/events',
      summary: 'The whole log in order (staff only)',
      auth: 'jwt',
      query: HistoryQuery,
      async authorize(principal) {
        if (!staff(deps, principal)) throw new ForbiddenError('Only staff may read the whole log');
      },
      async handler({ query }) {
        return page({ kind: 'all' }, query);
      },
    }),
  ];
}
