// A project's API keys and HMAC keys. Keys are looked up by hash; only the development API key
// can be shown again, and only to a user logged in with a JWT (the spec's rule for
// developmentKeys); other callers see the first characters.
import { z } from 'zod';
import { addApiKey, addHmacKey, revokeApiKey, revokeHmacKey } from '../../commands/projects/projectCommands';
import { API_KEY_ROLES } from '../../domain/project/projectEvents';
import { API_KEY_VALUE_MAX, HMAC_KEY_MAX, KEY_NAME_MAX } from '../../domain/project/projectDecider';
import { UnauthorizedError } from '../../domain/shared/errors';
import type { ApiKeyDocument } from '../../projections/apiKeys/apiKeyDocument';
import type { HmacKeyEntry } from '../../projections/projects/projectDocument';
import type { ApiDeps } from '../apiDeps';
import { type Principal, requestContext } from '../auth/principal';
import { intParam, operation, type Operation } from '../http/operation';
import { withTextRule } from '../http/withTextRule';

const keyName = z.string().min(1).max(KEY_NAME_MAX).superRefine(withTextRule({ max: KEY_NAME_MAX }));

const AddProjectApiKeyRequest = z
  .object({
    name: keyName,
    apiKey: z.string().max(API_KEY_VALUE_MAX).superRefine(withTextRule({ max: API_KEY_VALUE_MAX })).optional(),
    isDevelopmentKey: z.boolean().default(false),
    role: z.enum(API_KEY_ROLES),
    ttl: z.number().int().positive().max(10 * 365 * 24 * 3600).optional(),
    extensionId: z.number().int().optional(),
  })
  .strict();

const AddHmacKeyRequest = z
  .object({ name: keyName, hmacKey: z.string().min(1).max(HMAC_KEY_MAX).superRefine(withTextRule({ max: HMAC_KEY_MAX })), isDevelopmentKey: z.boolean().default(false) })
  .strict();

const isJwtUser = (p: Principal): boolean => p.kind === 'user' && p.via === 'jwt';
const truncated = (value: string): string => `${value.slice(0, 10)}...`;
const userIdOf = (p: Principal): number | null => (p.kind === 'user' ? p.user.id : null);

export function projectKeyOperations(deps: ApiDeps): Operation[] {

  async function createdBy(userIds: (number | null)[]): Promise<Map<number, Record<string, unknown>>> {
    const ids = [...new Set(userIds.filter((id): id is number => id !== null))];
    const users = await deps.users.byIds(ids);
    return new Map(users.map((u) => [u.id, { id: u.id, name: u.name ?? u.username, username: u.username }]));
  }

  return [
    operation({
      operationId: 'getCurrentApiKeyInfo',
      method: 'get',
      path: '/api/projects/api-key-info',
      summary: 'The project, id and role of the API key making the call (project API keys only)',
      auth: 'any',
      async handler({ principal }) {
        if (principal.kind !== 'apiKey') throw new UnauthorizedError('This operation describes the API key it is called with: send a project API key in x-api-key');
        return { apiKeyId: principal.apiKeyId, projectId: principal.projectId, role: principal.role };
      },
    }),
    operation({
      operationId: 'listProjectApiKeys',
      method: 'get',
      path: '/api/:projectId/apikeys',
      summary: "The project's API keys (shown truncated, except the development key to a JWT user)",
      auth: 'any',
      async handler({ principal, params, project }) {
        const keys = await deps.apiKeys.forProject(project.id);
        const users = await createdBy(keys.map((k) => k.createdByUserId));
        const showDevelopmentKey = isJwtUser(principal);
        return {
          apiKeys: keys.map((k: ApiKeyDocument) => ({
            id: k.apiKeyId,
            apiKey: k.isDevelopmentKey && showDevelopmentKey && project.developmentApiKey ? project.developmentApiKey : truncated(k.keyHint),
            isDevelopmentKey: k.isDevelopmentKey,
            name: k.name,
            created: k.created,
            role: k.role,
            ...(k.createdByUserId !== null && users.has(k.createdByUserId) ? { createdByUser: users.get(k.createdByUserId) } : {}),
            ...(k.lastUsed ? { lastUsed: { date: k.lastUsed } } : {}),
            ...(k.expires ? { expires: k.expires } : {}),
          })),
        };
      },
    }),
    operation({
      operationId: 'addProjectApiKey',
      method: 'post',
      path: '/api/:projectId/apikeys',
      summary: 'Add an API key (generated, or chosen: ei_ prefix, 32 characters or more), with a role and an optional time to live',
      auth: 'any',
      body: AddProjectApiKeyRequest,
      async handler({ principal, params, body, requestId, settle }) {
        const projectId = intParam(params, 'projectId');
        const result = await addApiKey(
          deps,
          projectId,
          {
            name: body.name,
            role: body.role,
            isDevelopmentKey: body.isDevelopmentKey,
            createdByUserId: userIdOf(principal),
            ...(body.apiKey === undefined ? {} : { apiKey: body.apiKey }),
            ...(body.ttl === undefined ? {} : { ttlSeconds: body.ttl }),
          },
          requestContext(principal, requestId),
        );
        await settle(result.position);
        return { id: result.apiKeyId, apiKey: result.apiKey };
      },
    }),
    operation({
      operationId: 'addProjectIngestionOnlyApiKey',
      method: 'post',
      path: '/api/:projectId/apikeys/ingestiononly',
      summary: 'Add an API key that can only send data to the ingestion API',
      auth: 'any',
      body: z.object({ name: keyName }).strict(),
      async handler({ principal, params, body, requestId, settle }) {
        const result = await addApiKey(
          deps,
          intParam(params, 'projectId'),
          { name: body.name, role: 'ingestiononly', isDevelopmentKey: false, createdByUserId: userIdOf(principal) },
          requestContext(principal, requestId),
        );
        await settle(result.position);
        return { id: result.apiKeyId, apiKey: result.apiKey };
      },
    }),
    operation({
      operationId: 'revokeProjectApiKey',
      method: 'delete',
      path: '/api/:projectId/apikeys/:apiKeyId',
      summary: 'Revoke an API key: it is refused at once, on the management and ingestion APIs',
      auth: 'any',
      async handler({ principal, params, requestId, settle, project }) {
        const position = await revokeApiKey(deps, project.id, intParam(params, 'apiKeyId'), requestContext(principal, requestId));
        await settle(position);
        return {};
      },
    }),
    operation({
      operationId: 'getHmacDevkey',
      method: 'get',
      path: '/api/:projectId/devkeys/hmac',
      summary: "The project's development HMAC key (JWT only; API keys get none)",
      auth: 'any',
      async handler({ principal, params, project }) {
        return { hmacKey: isJwtUser(principal) ? (project.developmentHmacKey ?? undefined) : undefined };
      },
    }),
    operation({
      operationId: 'listProjectHmacKeys',
      method: 'get',
      path: '/api/:projectId/hmackeys',
      summary: "The project's live HMAC keys (values in full for a JWT user, else truncated)",
      auth: 'any',
      async handler({ principal, params, project }) {
        const keys = Object.values(project.hmacKeys ?? {})
          .filter((k: HmacKeyEntry) => !k.revoked)
          .sort((a, b) => a.id - b.id);
        const users = await createdBy(keys.map((k) => k.createdByUserId));
        return {
          hmacKeys: keys.map((k) => ({
            id: k.id,
            hmacKey: isJwtUser(principal) ? k.hmacKey : truncated(k.hmacKey),
            isDevelopmentKey: k.isDevelopmentKey,
            name: k.name,
            created: k.created,
            ...(k.createdByUserId !== null && users.has(k.createdByUserId) ? { createdByUser: users.get(k.createdByUserId) } : {}),
          })),
        };
      },
    }),
    operation({
      operationId: 'addProjectHmacKey',
      method: 'post',
      path: '/api/:projectId/hmackeys',
      summary: 'Add an HMAC key that signed device data may be verified with',
      auth: 'any',
      body: AddHmacKeyRequest,
      async handler({ principal, params, body, requestId, settle }) {
        const result = await addHmacKey(
          deps,
          intParam(params, 'projectId'),
          { name: body.name, hmacKey: body.hmacKey, isDevelopmentKey: body.isDevelopmentKey, createdByUserId: userIdOf(principal) },
          requestContext(principal, requestId),
        );
        await settle(result.position);
        return { id: result.hmacKeyId };
      },
    }),
    operation({
      operationId: 'revokeProjectHmacKey',
      method: 'delete',
      path: '/api/:projectId/hmackeys/:hmacId',
      summary: 'Revoke an HMAC key: data signed with it no longer verifies',
      auth: 'any',
      async handler({ principal, params, requestId, settle, project }) {
        const position = await revokeHmacKey(deps, project.id, intParam(params, 'hmacId'), requestContext(principal, requestId));
        await settle(position);
        return {};
      },
    }),
  ];
}
