import type {} from 'koa-body'; // its augmentation types ctx.request.body
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { ValidationError } from '../../domain/shared/errors';
import type { Position } from '../../stores/eventstore/eventStore';
import { authenticate, requirePrincipal, type AuthDeps, type AuthRequirement, type Principal } from '../auth/principal';

export interface OperationRequest<Body, Query, Auth extends AuthRequirement = AuthRequirement> {
  ctx: Context;
  body: Body;
  query: Query;
  params: Record<string, string>;
  /** Present whenever the operation requires authentication. */
  principal: Auth extends 'none' ? Principal | null : Principal;
  requestId: string;
  /** Read your writes: resolves once the read models have applied the write at `position`. */
  settle(position: Position): Promise<void>;
}

type AnySchema = z.ZodType;

/**
 * One operation of the management API: its path, scheme, the schemas of its body and query (one
 * per operation; the same schemas produce the OpenAPI document) and its handler. The handler
 * answers the response fields; the envelope adds `success`.
 */
export interface Operation<B extends AnySchema = AnySchema, Q extends AnySchema = AnySchema, A extends AuthRequirement = AuthRequirement> {
  operationId: string;
  method: 'get' | 'post' | 'delete';
  /** Koa-router style (`/api/:projectId`), relative to `/v1`. */
  path: string;
  summary: string;
  auth: A;
  body?: B;
  query?: Q;
  handler(request: OperationRequest<z.infer<B>, z.infer<Q>, A>): Promise<Record<string, unknown>>;
}

export function operation<B extends AnySchema = z.ZodUndefined, Q extends AnySchema = z.ZodUndefined, A extends AuthRequirement = AuthRequirement>(
  op: Operation<B, Q, A>,
): Operation {
  return op as unknown as Operation;
}

/** `"username" is required`, `"privacyPolicy": expected boolean, received string`. */
export function describeIssues(where: string, error: z.ZodError): string {
  const issue = error.issues[0]!;
  const field = issue.path.map(String).join('.');
  if (issue.code === 'invalid_type' && /received undefined$/.test(issue.message)) return `Invalid ${where}: "${field}" is required`;
  const reason = issue.message.replace(/^Invalid input: /, '');
  return field === '' ? `Invalid ${where}: ${reason}` : `Invalid ${where}: "${field}": ${reason}`;
}

function validate<S extends AnySchema>(schema: S | undefined, value: unknown, where: string): z.infer<S> {
  if (!schema) return undefined as z.infer<S>;
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ValidationError(describeIssues(where, parsed.error));
  return parsed.data;
}

export interface MountDeps {
  auth: AuthDeps;
  settle(position: Position): Promise<void>;
}

export function mountOperations(router: Router, operations: readonly Operation[], deps: MountDeps): void {
  for (const op of operations) {
    router[op.method](op.operationId, op.path, async (ctx) => {
      // Authenticate first: a request without valid credentials learns nothing from validation.
      const principal = requirePrincipal(await authenticate(ctx, deps.auth), op.auth);
      const body = validate(op.body, ctx.request.body ?? {}, 'request body');
      const query = validate(op.query, ctx.query, 'query parameters');
      const result = await op.handler({
        ctx,
        body,
        query,
        params: ctx.params as Record<string, string>,
        principal: principal as Principal,
        requestId: String(ctx.state.requestId),
        settle: deps.settle,
      });
      // An operation answering with a redirect (the spec's 302 to the payment portal) sets `redirect`.
      const redirect = ctx.state.redirect as string | undefined;
      if (redirect) ctx.redirect(redirect);
      ctx.status = redirect ? 302 : 200;
      ctx.body = { success: true, ...result };
    });
  }
}

/** Path parameters that are integer ids. */
export function intParam(params: Record<string, string>, name: string): number {
  const raw = params[name] ?? '';
  const value = Number(raw);
  if (!/^\d{1,15}$/.test(raw) || !Number.isSafeInteger(value)) throw new ValidationError(`Invalid path parameter "${name}": expected an integer, got "${raw}"`);
  return value;
}

/** Query booleans arrive as text (`true`/`false`). */
export const queryBoolean = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
export const queryInteger = z.string().regex(/^\d{1,15}$/, 'expected an integer').transform(Number);
