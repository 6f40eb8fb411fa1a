import { z } from 'zod';
import type { Operation } from './http/operation';

/** The OpenAPI document, produced from the same schemas that validate the requests. */
export function openApiDocument(operations: readonly Operation[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const path = op.path.replace(/:(\w+)/g, '{$1}');
    const parameters = [...op.path.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: m[1] === 'deviceId' ? 'string' : 'integer' } }));
    if (op.query) {
      const schema = z.toJSONSchema(op.query, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, s] of Object.entries(schema.properties ?? {})) {
        parameters.push({ name, in: 'query', required: (schema.required ?? []).includes(name), schema: s } as never);
      }
    }
    (paths[path] ??= {})[op.method] = {
      operationId: op.operationId,
      summary: op.summary,
      // OAuth2 access tokens only where the operation names its scope (the spec's table).
      security:
        op.auth === 'none'
          ? []
          : op.auth === 'jwt'
            ? [{ JWTHttpHeaderAuthentication: [] }, { JWTAuthentication: [] }, ...(op.oauthScope ? [{ OAuth2: [op.oauthScope] }] : [])]
            : op.oauthScope
              ? [{ ApiKeyAuthentication: [] }, { JWTAuthentication: [] }, { JWTHttpHeaderAuthentication: [] }, { OAuth2: [op.oauthScope] }]
              : undefined,
      parameters,
      ...(op.multipart
        ? {
            requestBody: {
              required: true,
              content: {
                'multipart/form-data': {
                  schema: { type: 'object', required: op.multipart.files, properties: Object.fromEntries(op.multipart.files.map((f) => [f, { type: 'string', format: 'binary' }])) },
                },
              },
            },
          }
        : {}),
      ...(op.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: z.toJSONSchema(op.body, { io: 'input', unrepresentable: 'any' }) } } } }
        : {}),
      responses: { '200': { description: 'OK; `success` tells whether the operation succeeded' } },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Edge ML service management API', version: '1.0.0' },
    servers: [{ url: '/v1' }],
    components: {
      securitySchemes: {
        ApiKeyAuthentication: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        JWTAuthentication: { type: 'apiKey', in: 'cookie', name: 'jwt' },
        JWTHttpHeaderAuthentication: { type: 'apiKey', in: 'header', name: 'x-jwt-token' },
        OAuth2: { type: 'http', scheme: 'bearer' },
      },
    },
    security: [{ ApiKeyAuthentication: [] }, { JWTAuthentication: [] }, { JWTHttpHeaderAuthentication: [] }],
    paths,
  };
}
