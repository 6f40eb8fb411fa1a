import { z } from 'zod';
import { createEmptyImpulse, deleteImpulse, issueBlockId, saveImpulse, updateImpulse } from '../../commands/impulses/impulseCommands';
import { impulseBlockCatalog } from '../../domain/impulse/blockCatalog';
import { NotFoundError } from '../../domain/shared/errors';
import type { ImpulseDocument } from '../../projections/impulses/impulseDocument';
import type { Position } from '../../stores/eventstore/eventStore';
import type { ApiDeps } from '../apiDeps';
import { actorOf, requireProject, type Principal } from '../auth/principal';
import { intParam, operation, queryInteger, type Operation } from '../http/operation';
import { CreateImpulseRequest, CreateNewEmptyImpulseRequest, UpdateImpulseRequest } from './impulseSchemas';
import { selectedImpulseId } from './selectedImpulse';

/** Impulses a free-tier project may hold (every project is free tier for now). */
export const MAX_IMPULSES_FREE_TIER = 3;

const ImpulseQuery = z.object({ impulseId: queryInteger.optional() });

/** The SDK's Impulse. */
export function impulseView(doc: ImpulseDocument): Record<string, unknown> {
  return {
    id: doc.id,
    name: doc.name,
    type: doc.type,
    tags: doc.tags,
    inputBlocks: doc.inputBlocks,
    dspBlocks: doc.dspBlocks,
    learnBlocks: doc.learnBlocks,
    postProcessingBlocks: doc.postProcessingBlocks,
  };
}

/** Reads need read access to the project, changes write access; checked before the body is looked at. */
export const projectAccess =
  (deps: ApiDeps, access: 'read' | 'write') =>
  async (principal: Principal, params: Record<string, string>): Promise<void> => {
    await requireProject(deps.projects, principal, intParam(params, 'projectId'), access);
  };

const context = (principal: Principal, requestId: string) => ({ actor: actorOf(principal), correlationId: requestId, now: new Date() });

async function settled(settle: (p: Position) => Promise<void>, position: Position | undefined): Promise<void> {
  if (position !== undefined) await settle(position);
}

export function impulseOperations(deps: ApiDeps): Operation[] {
  const read = projectAccess(deps, 'read');
  const write = projectAccess(deps, 'write');

  const getImpulse = async (params: Record<string, string>, impulseId: number | undefined) => {
    const projectId = intParam(params, 'projectId');
    const impulse = await deps.impulses.byId(projectId, await selectedImpulseId(deps, projectId, impulseId));
    if (!impulse && impulseId !== undefined) throw new NotFoundError(`Impulse ${impulseId} not found`, 'IMPULSE_NOT_FOUND');
    // No impulse yet is not an error: `impulse` is optional in GetImpulseResponse.
    return impulse ? { impulse: impulseView(impulse) } : {};
  };

  return [
    operation({
      operationId: 'getImpulseBlocks',
      method: 'get',
      path: '/api/:projectId/impulse/blocks',
      summary: 'The blocks an impulse of this project can be built from',
      auth: 'any',
      authorize: read,
      async handler() {
        return impulseBlockCatalog();
      },
    }),
    operation({
      operationId: 'getImpulseAll',
      method: 'get',
      path: '/api/:projectId/impulse/all',
      summary: 'An impulse (the default when impulseId is not given), disabled blocks included',
      auth: 'any',
      query: ImpulseQuery,
      authorize: read,
      // Blocks cannot be disabled yet, so this answers what getImpulse answers.
      handler: ({ params, query }) => getImpulse(params, query.impulseId),
    }),
    operation({
      operationId: 'createNewEmptyImpulse',
      method: 'post',
      path: '/api/:projectId/impulse/new',
      summary: 'Create an impulse without blocks',
      auth: 'any',
      body: CreateNewEmptyImpulseRequest,
      authorize: write,
      async handler({ principal, params, body, requestId, settle }) {
        const projectId = intParam(params, 'projectId');
        const { impulseId, position } = await createEmptyImpulse(
          deps,
          { projectId, impulseType: body.type ?? 'default', maxImpulses: MAX_IMPULSES_FREE_TIER },
          context(principal, requestId),
        );
        await settled(settle, position);
        return { id: impulseId, redirectUrl: `${deps.settings.publicUrl}/studio/${projectId}/create-impulse/${impulseId}` };
      },
    }),
    operation({
      operationId: 'updateImpulse',
      method: 'post',
      path: '/api/:projectId/impulse/update',
      summary: "Change an impulse's name, tags or type",
      auth: 'any',
      query: ImpulseQuery,
      body: UpdateImpulseRequest,
      authorize: write,
      async handler({ principal, params, query, body, requestId, settle }) {
        const position = await updateImpulse(
          deps.events,
          {
            projectId: intParam(params, 'projectId'),
            impulseId: (await selectedImpulseId(deps, intParam(params, 'projectId'), query.impulseId)) ?? null,
            ...(body.name === undefined ? {} : { name: body.name }),
            ...(body.tags === undefined ? {} : { tags: body.tags }),
            ...(body.type === undefined ? {} : { impulseType: body.type }),
          },
          context(principal, requestId),
        );
        await settled(settle, position);
        return {};
      },
    }),
    operation({
      operationId: 'getNewBlockId',
      method: 'post',
      path: '/api/:projectId/impulse/get-new-block-id',
      summary: 'A block id not used in the project and never handed out before',
      auth: 'any',
      authorize: write,
      async handler({ principal, params, requestId }) {
        const { blockId } = await issueBlockId(deps.events, intParam(params, 'projectId'), context(principal, requestId));
        // No read model shows issued ids: nothing to wait for.
        return { blockId };
      },
    }),
    operation({
      operationId: 'getImpulse',
      method: 'get',
      path: '/api/:projectId/impulse',
      summary: 'An impulse (the default when impulseId is not given)',
      auth: 'any',
      query: ImpulseQuery,
      authorize: read,
      handler: ({ params, query }) => getImpulse(params, query.impulseId),
    }),
    operation({
      operationId: 'createImpulse',
      method: 'post',
      path: '/api/:projectId/impulse',
      summary: 'Create an impulse, or replace the blocks of impulseId (of the default impulse when not given)',
      auth: 'any',
      query: ImpulseQuery,
      body: CreateImpulseRequest,
      authorize: write,
      async handler({ principal, params, query, body, requestId, settle }) {
        const { impulseId, position } = await saveImpulse(
          deps,
          {
            projectId: intParam(params, 'projectId'),
            impulseId: (await selectedImpulseId(deps, intParam(params, 'projectId'), query.impulseId)) ?? null,
            ...(body.name === undefined ? {} : { name: body.name }),
            ...(body.type === undefined ? {} : { impulseType: body.type }),
            blocks: {
              inputBlocks: body.inputBlocks,
              dspBlocks: body.dspBlocks,
              learnBlocks: body.learnBlocks,
              postProcessingBlocks: body.postProcessingBlocks ?? [],
            },
            maxImpulses: MAX_IMPULSES_FREE_TIER,
          },
          context(principal, requestId),
        );
        await settled(settle, position);
        return { id: impulseId };
      },
    }),
    operation({
      operationId: 'deleteImpulse',
      method: 'delete',
      path: '/api/:projectId/impulse',
      summary: 'Delete an impulse (the default when impulseId is not given)',
      auth: 'any',
      query: ImpulseQuery,
      authorize: write,
      async handler({ principal, params, query, requestId, settle }) {
        const position = await deleteImpulse(deps.events, { projectId: intParam(params, 'projectId'), impulseId: (await selectedImpulseId(deps, intParam(params, 'projectId'), query.impulseId)) ?? null }, context(principal, requestId));
        await settled(settle, position);
        return {};
      },
    }),
    operation({
      operationId: 'getAllImpulses',
      method: 'get',
      path: '/api/:projectId/impulses',
      summary: "The project's impulses",
      auth: 'any',
      authorize: read,
      async handler({ params }) {
        const impulses = await deps.impulses.forProject(intParam(params, 'projectId'));
        return { impulses: impulses.map(impulseView), maxImpulseCount: MAX_IMPULSES_FREE_TIER };
      },
    }),
  ];
}
