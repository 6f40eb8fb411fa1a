import { mkdtemp, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { HttpMethodEnum, koaBody, type ScalarOrArrayFiles } from 'koa-body'; // its augmentation types ctx.request.body
import { z } from 'zod';
import { TooLargeError, ValidationError } from '../../domain/shared/errors';
import type { Position } from '../../stores/eventstore/eventStore';
import type { Project } from '../../projections/projects/projectQueries';
import type { UserDocument } from '../../projections/users/userDocument';
import type { ApiScope } from '../../domain/oauth/oauthScopes';
import { authenticate, requireOAuthScope, requirePrincipal, type AuthDeps, type AuthRequirement, type Principal } from '../auth/principal';
import type { ReadModelMemo } from './readModelMemo';

export interface OperationRequest<Body, Query, Auth extends AuthRequirement = AuthRequirement, Granted = unknown> {
  ctx: Context;
  body: Body;
  query: Query;
  params: Record<string, string>;
  /** Present whenever the operation requires authentication. */
  principal: Auth extends 'none' ? Principal | null : Principal;
  /** The signed-in user: always there for a JWT-only operation; null for an API key or no credentials. */
  user: Auth extends 'jwt' ? UserDocument : UserDocument | null;
  /**
   * What the operation's `authorize` answered: what it found the principal may reach (an
   * organization and the caller's standing in it), so the handler need not look it up again.
   */
  authorized: Granted;
  requestId: string;
  /** Read your writes: resolves once the read models have applied the write at `position` (at once when there was none). */
  settle(position: Position | undefined): Promise<void>;
  /**
   * The project of a `:projectId` path, found and checked once before the body is read (see
   * `MountDeps.projectAccess`); reading it on any other path is a programming error.
   */
  project: Project;
  /** The files of a multipart operation by field name (see `Operation.multipart`); empty otherwise. */
  files: Readonly<Record<string, UploadedFile>>;
}

/** A file of a multipart request, in a temporary file that is removed once the handler is done. */
export interface UploadedFile {
  path: string;
  size: number;
  /** Lowercase hex SHA-256 of the content, computed as it arrived (the blob store's address). */
  sha256: string;
  /** As the client named and typed it: informative only, never to be trusted. */
  clientFilename: string | null;
  clientType: string | null;
}

/**
 * A `multipart/form-data` body, for this operation only (the app's body parser leaves multipart
 * alone). Each listed field may carry one file of at most `maxFileBytes`; a file in another field,
 * or a second file in one, is refused. Files stream to temporary files, never whole into memory.
 */
export interface MultipartOptions {
  files: readonly string[];
  maxFileBytes: number;
  /** Where the temporary files go; the system's temporary folder by default. */
  uploadDir?: string;
}

type AnySchema = z.ZodType;

/**
 * One operation of the management API: its path, scheme, the schemas of its body and query (one
 * per operation; the same schemas produce the OpenAPI document) and its handler. The handler
 * answers the response fields; the envelope adds `success`.
 */
export interface Operation<B extends AnySchema = AnySchema, Q extends AnySchema = AnySchema, A extends AuthRequirement = AuthRequirement, G = unknown> {
  operationId: string;
  method: 'get' | 'post' | 'put' | 'delete';
  /** Koa-router style (`/api/:projectId`), relative to `/v1`. */
  path: string;
  summary: string;
  auth: A;
  body?: B;
  query?: Q;
  /**
   * For `:projectId` paths: what the principal must be allowed on the project, checked before the
   * body is read. Reading for GET and changing otherwise, unless set.
   */
  projectAccess?: 'read' | 'write' | 'devices';
  /**
   * False for `:projectId` operations whose `authorize` decides alone who may reach the project
   * (its history, which staff read without collaborating and which outlives the project).
   */
  checkProject?: false;
  /** The OAuth2 scope whose access tokens may call it (the spec's table); none: OAuth tokens are refused. */
  oauthScope?: ApiScope;
  /** Whether an organization API key may call it (organization routes check the key's organization themselves). */
  acceptsOrganizationKey?: boolean;
  /** Set for operations that take files; their text fields are validated by `body`. */
  multipart?: MultipartOptions;
  /**
   * Whether this principal may call the operation on these path parameters, checked before the
   * body is parsed or validated: a caller without the right learns nothing from validation. What it
   * answers reaches the handler as `request.authorized`.
   */
  authorize?(principal: A extends 'none' ? Principal | null : Principal, params: Record<string, string>): Promise<G>;
  /**
   * Whether this answer may be kept while the read models stand still (`MountDeps.answers`): true
   * only when it is made of the principal, the host, the path, this query and the read models alone,
   * and of the clock no finer than a second (nothing of the log, the blobs or other requests).
   */
  keepAnswer?(query: z.infer<Q>): boolean;
  handler(request: OperationRequest<z.infer<B>, z.infer<Q>, A, G>): Promise<Record<string, unknown>>;
}

/**
 * The one way to declare an operation: infers the body, query, principal and `authorized` types
 * its handler sees from its schemas, `auth` and `authorize`.
 */
export function operation<B extends AnySchema = z.ZodUndefined, Q extends AnySchema = z.ZodUndefined, A extends AuthRequirement = AuthRequirement, G = void>(
  op: Operation<B, Q, A, G>,
): Operation {
  return op;
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
  settle(position: Position | undefined): Promise<void>;
  /**
   * Whether the principal may reach the project of a `:projectId` path (reading for GET, changing
   * otherwise), checked for every such operation before its body is read: another project's key,
   * a stranger or a read-only key learns nothing from validation.
   */
  projectAccess(principal: Principal, projectId: number, access: 'read' | 'write' | 'devices'): Promise<Project>;
  /**
   * The JSON answers of operations that allow it (`Operation.keepAnswer`), by what they depend on;
   * kept as UTF-8 bytes, so a kept answer is not measured and encoded again for every response.
   */
  answers?: ReadModelMemo<Buffer>;
}

/** A safety net behind the change mark, and the clock's share in a kept answer (a month's compute time). */
export const ANSWER_MEMO_MS = 1000;

/** Who asks, as far as an answer can tell them apart (the user's document itself is read-model state). */
function principalKey(principal: Principal | null): string {
  if (!principal) return '-';
  if (principal.kind === 'user') return `u${principal.user.id}${principal.via}${principal.via === 'oauth' ? principal.oauth.scopes.join(' ') : ''}`;
  return principal.kind === 'apiKey' ? `k${principal.apiKeyId}` : `o${principal.apiKeyId}`;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** E-mail addresses are the `users:emails:read` scope's: an application without it sees none, its user's included. */
function withoutUnscopedEmails<T>(principal: Principal | null, answer: T): T {
  if (principal?.kind !== 'user' || principal.via !== 'oauth' || principal.oauth.scopes.includes('users:emails:read')) return answer;
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).filter(([k]) => !/email/i.test(k)).map(([k, v]) => [k, strip(v)]));
  };
  return strip(answer) as T;
}

/** A key's `lastUsed` counts what it was accepted for: a refused call records nothing. */
async function noteKeyUse(auth: AuthDeps, principal: Principal | null): Promise<void> {
  if (principal?.kind === 'apiKey') await auth.apiKeyUsage?.note(principal.projectId, principal.apiKeyId);
}

export function mountOperations(router: Router, operations: readonly Operation[], deps: MountDeps): void {
  for (const op of operations) {
    const parseMultipart = op.multipart ? multipartParser(op.multipart) : undefined;
    router[op.method](op.operationId, op.path, async (ctx) => {
      try {
        // Authenticate first: a request without valid credentials learns nothing from validation,
        // and sends no file to our disk.
        const principal = requirePrincipal(await authenticate(ctx, deps.auth), op.auth, op.acceptsOrganizationKey === true);
        requireOAuthScope(ctx, principal, op.oauthScope);
        // A kept answer was given to this very principal, path and query under the same read models:
        // the project check, validation and handler would all come out the same.
        const answerKey = op.keepAnswer && deps.answers ? `${op.operationId}\u0000${ctx.host}\u0000${ctx.url}\u0000${principalKey(principal)}` : undefined;
        const kept = answerKey === undefined ? undefined : deps.answers?.get(answerKey);
        if (kept !== undefined) {
          ctx.status = 200;
          ctx.type = JSON_TYPE;
          ctx.body = kept;
          await noteKeyUse(deps.auth, principal);
          return;
        }
        const mark = answerKey === undefined ? undefined : deps.answers?.mark();
        const project =
          principal && op.path.includes('/:projectId') && op.checkProject !== false
            ? await deps.projectAccess(principal, intParam(ctx.params as Record<string, string>, 'projectId'), op.projectAccess ?? (op.method === 'get' ? 'read' : 'write'))
            : undefined;
        const authorized = await op.authorize?.(principal as Principal, ctx.params as Record<string, string>);
        const files = parseMultipart ? await parseMultipart(ctx) : {};
        const body = validate(op.body, ctx.request.body ?? {}, 'request body');
        const query = validate(op.query, ctx.query, 'query parameters');
        const answered = await op.handler({
          ctx,
          body,
          query,
          params: ctx.params as Record<string, string>,
          principal: principal as Principal,
          user: principal?.kind === 'user' ? principal.user : null,
          authorized,
          requestId: String(ctx.state.requestId),
          settle: deps.settle,
          files,
          get project(): Project {
            if (!project) throw new Error(`${op.operationId}: no project was checked for this path (${op.path})`);
            return project;
          },
        });
        const result = withoutUnscopedEmails(principal, answered);
        // An operation answering with a redirect (the spec's 302 to the payment portal) sets `redirect`.
        const redirect = ctx.state.redirect as string | undefined;
        if (redirect) ctx.redirect(redirect);
        ctx.status = redirect ? 302 : 200;
        // An operation answering something other than JSON (a log download) sets `textBody`.
        const text = ctx.state.textBody as string | NodeJS.ReadableStream | undefined;
        // One answering bytes (a stored .npy) sets `fileBody` with its content type.
        const file = ctx.state.fileBody as { type: string; body: Buffer | NodeJS.ReadableStream } | undefined;
        if (file !== undefined) {
          ctx.type = file.type;
          ctx.body = file.body;
        } else if (text !== undefined) {
          ctx.type = 'text/plain; charset=utf-8';
          ctx.body = text;
        } else if (answerKey !== undefined && !redirect && op.keepAnswer?.(query)) {
          const answer = Buffer.from(JSON.stringify({ success: true, ...result }));
          deps.answers?.set(answerKey, mark, answer, answer.length, Date.now() + ANSWER_MEMO_MS);
          ctx.type = JSON_TYPE;
          ctx.body = answer;
        } else ctx.body = { success: true, ...result };
        await noteKeyUse(deps.auth, principal);
      } finally {
        if (parseMultipart) {
          await removeUploads(ctx.request.files);
          await removeUploadFolder(ctx);
        }
      }
    });
  }
}

/** The file a multipart operation requires in `field`, or 400 naming the field. */
export function requireFile(request: { files: Readonly<Record<string, UploadedFile>> }, field: string): UploadedFile {
  const file = request.files[field];
  if (!file) throw new ValidationError(`Invalid request body: "${field}" is required, as a file field of a multipart/form-data body`);
  return file;
}

/** Room for the parts' headers and boundaries besides the files' bytes. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
const MAX_TEXT_FIELDS = 32;

type FormidableFile = Exclude<ScalarOrArrayFiles[string], readonly unknown[]>;

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}

const fileTooLarge = (options: MultipartOptions) => new TooLargeError(`The file is too large: at most ${formatBytes(options.maxFileBytes)}`, 'FILE_TOO_LARGE');

/** Formidable's errors (FormidableError `code`s) as errors a client can act on. */
function multipartError(error: Error, options: MultipartOptions): Error {
  const code = (error as { code?: unknown }).code;
  const fields = options.files.map((f) => `"${f}"`).join(', ');
  switch (code) {
    case 1009: // total file size exceeded, while streaming
    case 1016: // one file's size exceeded
      return fileTooLarge(options);
    case 1006: // text fields too large
      // Formidable takes a part without a Content-Type for a text field, however large.
      return new TooLargeError(`The form fields are too large: at most ${formatBytes(MULTIPART_OVERHEAD_BYTES)} of text (a file part needs a filename and a Content-Type)`, 'FIELDS_TOO_LARGE');
    case 1007:
      return new ValidationError(`Too many form fields: at most ${MAX_TEXT_FIELDS}`);
    case 1015:
      return new ValidationError(`Too many files: send one file in each of ${fields}`);
    case 1008:
    case 1010:
      return new ValidationError('The file is empty');
    case 1002:
      return new ValidationError('The upload was aborted before the body was complete');
    case 1003:
    case 1011:
    case 1012:
    case 1013:
    case 1014:
      return new ValidationError('Malformed multipart/form-data body', 'MALFORMED_MULTIPART');
    default:
      // Our side (a temporary file that could not be written): a 500.
      return error;
  }
}

function multipartParser(options: MultipartOptions): (ctx: Context) => Promise<Record<string, UploadedFile>> {
  const maxBodyBytes = options.maxFileBytes * options.files.length + MULTIPART_OVERHEAD_BYTES;
  const parserFor = (uploadDir: string) =>
    koaBody({
      multipart: true,
      json: false,
      urlencoded: false,
      text: false,
      parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH],
      formidable: {
        maxFiles: options.files.length,
        maxFileSize: options.maxFileBytes,
        // Checked as the bytes arrive (maxFileSize only at the end of each file).
        maxTotalFileSize: options.maxFileBytes * options.files.length,
        maxFields: MAX_TEXT_FIELDS,
        maxFieldsSize: MULTIPART_OVERHEAD_BYTES,
        allowEmptyFiles: false,
        hashAlgorithm: 'sha256',
        uploadDir,
      },
      onError(error, ctx) {
        // Formidable stops reading on an error; drain the rest so the client gets to read our answer.
        if (!ctx.req.complete) ctx.req.resume();
        throw multipartError(error, options);
      },
    });
  return async (ctx) => {
    // Anything else (JSON, no body) simply has no files; the handler says which one it needs.
    if (!ctx.is('multipart')) return {};
    // A declared length over the limit is refused before a byte is read.
    if (Number(ctx.get('content-length') || 0) > maxBodyBytes) throw fileTooLarge(options);
    // Formidable waits for the request's events: one that ended before (its client gone while it
    // was authenticated) would keep it, and the files it started, waiting for good.
    if (ctx.req.destroyed) throw abortedUpload();
    // A folder of this request's own: formidable removes a failed file 1 ms after closing its
    // stream, and a stream still opening then creates it again; sweeping the folder later (see
    // removeUploadFolder) removes whatever formidable left, without knowing the file names.
    const folder = await mkdtemp(path.join(options.uploadDir ?? tmpdir(), 'upload-'));
    ctx.state.uploadFolder = folder;
    await parserFor(folder)(ctx, async () => {});
    // Formidable is done at the closing boundary; the body must also have arrived whole (a client
    // that goes away in the last bytes has not sent this request), else the files are not used.
    await wholeBody(ctx);
    const files: Record<string, UploadedFile> = {};
    for (const [field, value] of Object.entries(ctx.request.files ?? {})) {
      if (!options.files.includes(field)) throw new ValidationError(`Unexpected file field "${field}": this operation takes ${options.files.map((f) => `"${f}"`).join(', ')}`);
      const all = Array.isArray(value) ? value : [value];
      if (all.length !== 1) throw new ValidationError(`Send one file in "${field}"`);
      const file = all[0] as FormidableFile;
      files[field] = { path: file.filepath, size: file.size, sha256: String(file.hash), clientFilename: file.originalFilename, clientType: file.mimetype };
    }
    return files;
  };
}

/**
 * Removes the request's upload folder: at once when it is empty (the usual case), else shortly
 * after, once formidable's own late removals and stream opens are over.
 */
async function removeUploadFolder(ctx: Context): Promise<void> {
  const folder = ctx.state.uploadFolder as string | undefined;
  if (folder === undefined) return;
  try {
    await rmdir(folder);
  } catch {
    const sweep = () => void rm(folder, { recursive: true, force: true }).catch(() => undefined);
    setTimeout(sweep, 250).unref();
    setTimeout(sweep, 2000).unref();
  }
}

const abortedUpload = () => new ValidationError('The upload was aborted before the body was complete', 'UPLOAD_ABORTED');

async function wholeBody(ctx: Context): Promise<void> {
  if (ctx.req.complete) return;
  ctx.req.resume();
  try {
    await finished(ctx.req);
  } catch {
    await removeUploads(ctx.request.files);
    throw abortedUpload();
  }
}

async function removeUploads(files: ScalarOrArrayFiles | undefined): Promise<void> {
  const all = Object.values(files ?? {}).flatMap((value) => (Array.isArray(value) ? value : [value]) as FormidableFile[]);
  await Promise.all(all.map((file) => rm(file.filepath, { force: true })));
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
