import { z } from 'zod';
import { createEmptyImpulse, deleteImpulse, issueBlockId, saveImpulse, updateImpulse } from '../../commands/impulses/impulseCommands';
import { impulseBlocksFor } from '../../domain/whitelabel/whitelabelBlocks';
import { whitelabelOfProject } from '../http/requestWhitelabel';
import { NotFoundError, ValidationError } from '../../domain/shared/errors';
import type { ImpulseDocument } from '../../projections/impulses/impulseDocument';
import type { ApiDeps } from '../apiDeps';
import { requestContext } from '../auth/principal';
import { intParam, operation, queryInteger, type Operation } from '../http/operation';
import { CreateImpulseRequest, CreateNewEmptyImpulseRequest, UpdateImpulseRequest } from './impulseSchemas';
import { selectedImpulseId } from './selectedImpulse';
import type { ProjectDocument } from '../../projections/projects/projectDocument';

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


export function impulseOperations(deps: ApiDeps): Operation[] {
  const getImpulse = async (project: ProjectDocument, impulseId: number | undefined) => {
    const impulse = await deps.impulses.byId(project.id, await selectedImpulseId(deps.impulses, project, impulseId));
    if (!impulse && impulseId !== undefined) throw new NotFoundError(`Impulse ${impulseId} not found`, 'IMPULSE_NOT_FOUND');
    // No impulse yet is not an error: `impulse` is optional in GetImpulseResponse.
    return impulse ? { impulse: impulseView(impulse) } : {};
  };

  return [
    operation({
      operationId: 'getImpulseBlocks',
      method: 'get',
      path: '/api/:projectId/impulse/blocks',
      summary: "The blocks an impulse of this project can be built from (its white label's learn blocks only)",
      auth: 'any',
      async handler({ ctx, project }) {
        return impulseBlocksFor(await whitelabelOfProject(deps, project, ctx));
      },
    }),
    operation({
      operationId: 'getImpulseAll',
      method: 'get',
      path: '/api/:projectId/impulse/all',
      summary: 'An impulse (the default when impulseId is not given), disabled blocks included',
      auth: 'any',
      query: ImpulseQuery,
      // Blocks cannot be disabled yet, so this answers what getImpulse answers.
      handler: ({ project, query }) => getImpulse(project, query.impulseId),
    }),
    operation({
      operationId: 'createNewEmptyImpulse',
      method: 'post',
      path: '/api/:projectId/impulse/new',
      summary: 'Create an impulse without blocks',
      auth: 'any',
      body: CreateNewEmptyImpulseRequest,
      async handler({ principal, params, body, requestId, settle }) {
        const projectId = intParam(params, 'projectId');
        const { impulseId, position } = await createEmptyImpulse(
          deps,
          { projectId, impulseType: body.type ?? 'default', maxImpulses: MAX_IMPULSES_FREE_TIER },
          requestContext(principal, requestId),
        );
        await settle(position);
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
      async handler({ principal, params, project, query, body, requestId, settle }) {
        const position = await updateImpulse(
          deps.events,
          {
            projectId: intParam(params, 'projectId'),
            impulseId: (await selectedImpulseId(deps.impulses, project, query.impulseId)) ?? null,
            ...(body.name === undefined ? {} : { name: body.name }),
            ...(body.tags === undefined ? {} : { tags: body.tags }),
            ...(body.type === undefined ? {} : { impulseType: body.type }),
          },
          requestContext(principal, requestId),
        );
        await settle(position);
        return {};
      },
    }),
    operation({
      operationId: 'getNewBlockId',
      method: 'post',
      path: '/api/:projectId/impulse/get-new-block-id',
      summary: 'A block id not used in the project and never handed out before',
      auth: 'any',
      async handler({ principal, params, requestId }) {
        const { blockId } = await issueBlockId(deps.events, intParam(params, 'projectId'), requestContext(principal, requestId));
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
      handler: ({ project, query }) => getImpulse(project, query.impulseId),
    }),
    operation({
      operationId: 'createImpulse',
      method: 'post',
      path: '/api/:projectId/impulse',
      summary: 'Create an impulse, or replace the blocks of impulseId (of the default impulse when not given)',
      auth: 'any',
      query: ImpulseQuery,
      body: CreateImpulseRequest,
      async handler({ principal, params, project, query, body, requestId, settle, ctx }) {
        // In a white label, only the learn blocks it enables (those the project's block listing shows).
        const whitelabel = await whitelabelOfProject(deps, project, ctx);
        if (whitelabel) {
          const allowed = new Set(impulseBlocksFor(whitelabel).learnBlocks.map((b) => b.type));
          const refused = [...new Set(body.learnBlocks.map((b) => b.type).filter((type) => !allowed.has(type)))];
          if (refused.length > 0) {
            throw new ValidationError(`"learnBlocks": ${refused.map((t) => `"${t}"`).join(', ')} ${refused.length === 1 ? 'is' : 'are'} not enabled in the white label ${whitelabel.name} (it enables ${[...allowed].map((t) => `"${t}"`).join(', ') || 'none'})`);
          }
        }
        const { impulseId, position } = await saveImpulse(
          deps,
          {
            projectId: intParam(params, 'projectId'),
            impulseId: (await selectedImpulseId(deps.impulses, project, query.impulseId)) ?? null,
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
          requestContext(principal, requestId),
        );
        await settle(position);
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
      async handler({ principal, params, project, query, requestId, settle }) {
        const position = await deleteImpulse(deps.events, { projectId: intParam(params, 'projectId'), impulseId: (await selectedImpulseId(deps.impulses, project, query.impulseId)) ?? null }, requestContext(principal, requestId));
        await settle(position);
        return {};
      },
    }),
    operation({
      operationId: 'getAllImpulses',
      method: 'get',
      path: '/api/:projectId/impulses',
      summary: "The project's impulses",
      auth: 'any',
      async handler({ params }) {
        const impulses = await deps.impulses.forProject(intParam(params, 'projectId'));
        return { impulses: impulses.map(impulseView), maxImpulseCount: MAX_IMPULSES_FREE_TIER };
      },
    }),
  ];
}
