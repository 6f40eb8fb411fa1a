import Router from '@koa/router';
import Koa from 'koa';
import type { Logger } from 'pino';
import { accessLog } from '../http/accessLog';
import { requestId } from '../http/requestId';
import { logRequestErrors } from '../http/requestErrors';
import { unknownMethod } from '../http/clientErrors';
import type { IdAllocator } from '../commands/idAllocator';
import { DomainError, TooLargeError, ValidationError } from '../domain/shared/errors';
import type { ApiKeyQueries } from '../projections/apiKeys/apiKeyQueries';
import type { ReadModelSync } from '../projections/projectionRunner';
import type { ProjectionHealth } from '../projections/projectionStatus';
import { healthRoute } from '../http/healthRoute';
import type { ProjectQueries } from '../projections/projects/projectQueries';
import type { SampleQueries } from '../projections/samples/sampleQueries';
import type { BlobStore } from '../stores/blobstore/blobStore';
import type { KeyStore } from '../stores/keystore/keyStore';
import type { EventStore } from '../stores/eventstore/eventStore';
import { parseAnnotationFiles } from './annotations';
import { SampleFormatError } from '../domain/sample/formats/sampleFormat';
import { ingestFile, type FileAnnotations } from './ingestFile';
import { FileTooLargeError, MAX_FILE_BYTES, receiveBody, type ReceivedFile } from './receiveFile';
import { receiveMultipart } from './receiveMultipart';
import { KeyedLock } from './keyedLock';
import { UniquenessReservations } from '../commands/uniqueness';
import type { SampleParser } from './sampleParser';
import type { ApiKeyUsageRecorder } from '../commands/projects/projectCommands';
import { noteStorageFailure, STORAGE_FULL_MESSAGE, STORAGE_FULL_RETRY_AFTER_SECONDS } from '../stores/storageFull';
import { textErrors } from './textErrors';
import { bodyIdleTimeout } from './bodyIdleTimeout';
import { MissingHeaderError, uploadOptions } from './uploadHeaders';
import { uploadTarget } from './uploadTarget';

export interface IngestionDeps {
  events: EventStore;
  /** The installation's keys: the reservations of personal values are named by a keyed hash. */
  keys: KeyStore;
  blobs: BlobStore;
  ids: IdAllocator;
  apiKeys: ApiKeyQueries;
  projects: ProjectQueries;
  samples: SampleQueries;
  /** Only for `x-disallow-duplicates`, whose check reads the sample read model: see ingestFile. */
  sync: ReadModelSync;
  settleTimeoutMs: number;
  /** How long an upload's body may send nothing before it is answered 408 (default DEFAULT_UPLOAD_IDLE_TIMEOUT_MS). */
  uploadIdleTimeoutMs?: number;
  /** What `GET /health` reports: the projections that failed on an event. */
  health: ProjectionHealth;
  /** Where uploads are received before they are checked and stored; made by the caller. */
  tmpDir: string;
  /** Parses received files as streams, a chunk at a time. */
  parser: SampleParser;
  /** Keeps the keys' `lastUsed`. */
  apiKeyUsage?: ApiKeyUsageRecorder;
  log: Logger;
}

export const MAX_FILES_PER_REQUEST = 1000;
export const DEFAULT_UPLOAD_IDLE_TIMEOUT_MS = 30_000;

/**
 * The read models an upload reads to know its key and project (uploadTarget): only their failure
 * makes this port's /health 503. The others' (samples included: the duplicates check asks the log's
 * reservations first) leave it accepting, and /health says `degraded`.
 */
const INGESTION_NEEDS: ReadonlySet<string> = new Set(['apiKeys', 'projects']);

const declaredTypeOf = (value: string | null | undefined): string | null => value?.split(';')[0]?.trim().toLowerCase() || null;

/** A file's failure as the answer states it: its status and a text that names the problem. */
function failureOf(error: unknown): { status: number; message: string; retryAfterSeconds?: number } | undefined {
  if (error instanceof SampleFormatError) return { status: 400, message: error.message };
  if (error instanceof DomainError) return { status: error.status, message: error.message };
  if (error instanceof FileTooLargeError) return { status: 413, message: error.message };
  // The files before it were stored and are listed so; this one and those after it were not.
  if (noteStorageFailure(error)) return { status: 507, message: STORAGE_FULL_MESSAGE, retryAfterSeconds: STORAGE_FULL_RETRY_AFTER_SECONDS };
  return undefined;
}

/**
 * The device ingestion API (ports 4810/4811): text/plain answers, API-key authentication, the
 * legacy `/data` endpoints (one body, name in X-File-Name) and multipart `/files`.
 * An upload is acknowledged once its SampleIngested event is durably appended, without waiting for
 * the read models: a device never reads back, and its acknowledgement is the durable event.
 * A client that reads back through the management API waits for the sample to show there.
 */
export function createIngestionApp(deps: IngestionDeps): Koa {
  const app = new Koa({ proxy: false });
  const router = new Router();
  const ingest = { ...deps, contentLocks: new KeyedLock(), reservations: new UniquenessReservations(deps.events, deps.keys) };

  // JSON, as on the management API: it is for operators' probes, not for devices.
  router.get('/health', healthRoute(deps.health, deps.log, { needs: INGESTION_NEEDS }));

  router.post('/api/:category/data', async (ctx) => {
    const target = await uploadTarget(ctx, deps, ctx.params.category ?? '');
    const options = uploadOptions(ctx);
    const fileNameHeader = ctx.get('x-file-name');
    if (!fileNameHeader) throw new MissingHeaderError('X-File-Name');
    let fileName: string;
    try {
      fileName = decodeURIComponent(fileNameHeader);
    } catch {
      throw new ValidationError('Header X-File-Name is not valid URI-encoded text');
    }
    const declared = declaredTypeOf(ctx.get('content-type'));
    if (declared !== 'application/json' && declared !== 'application/cbor') {
      throw new ValidationError(`Unsupported Content-Type "${declared}": /data takes application/json or application/cbor (use /files for other files)`);
    }
    let received: ReceivedFile;
    try {
      const declaredLength = ctx.request.length;
      received = await receiveBody(ctx.req, declaredLength, deps.tmpDir);
    } catch (error) {
      if (error instanceof FileTooLargeError) throw new TooLargeError(error.message);
      throw error;
    }
    try {
      const result = await ingestFile(ingest, target, options, { received, fileName, declaredType: declared });
      await deps.apiKeyUsage?.note(target.projectId, target.apiKeyId);
      ctx.type = 'text/plain';
      ctx.body = result.fileName;
    } catch (error) {
      const failure = failureOf(error);
      if (!failure) throw error;
      ctx.status = failure.status;
      if (failure.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(failure.retryAfterSeconds));
      ctx.type = 'text/plain';
      ctx.body = failure.message;
    } finally {
      await received.remove();
    }
  });

  router.post('/api/:category/files', async (ctx) => {
    const target = await uploadTarget(ctx, deps, ctx.params.category ?? '');
    const options = uploadOptions(ctx);
    if (!ctx.is('multipart/form-data')) throw new ValidationError('/files takes a multipart/form-data body with every file in a part named "data"');
    // The CLI's side files come on top of the data files.
    const parts = await receiveMultipart(ctx.req, ctx.req.headers, { dir: deps.tmpDir, maxFiles: MAX_FILES_PER_REQUEST + 3, maxFileBytes: MAX_FILE_BYTES });
    try {
      const stray = parts.find((p) => p.field !== 'data');
      if (stray) throw new ValidationError(`Unexpected file field "${stray.field}": every file part is named "data"`);
      const { annotations, dataParts } = await parseAnnotationFiles(parts);
      if (dataParts.length > MAX_FILES_PER_REQUEST) throw new ValidationError(`Too many files: at most ${MAX_FILES_PER_REQUEST} a request (got ${dataParts.length}); nothing was stored`);
      if (dataParts.length === 0) throw new ValidationError('No file in the request: send each file in a part named "data"');
      const results: { success: boolean; fileName?: string; error?: string }[] = [];
      let firstFailure: number | undefined;
      let stored = 0;
      for (const part of dataParts) {
        try {
          if (part.file instanceof FileTooLargeError) throw part.file;
          const notes: FileAnnotations | undefined = annotations.get(part.fileName);
          const result = await ingestFile(ingest, target, options, {
            received: part.file,
            fileName: part.fileName,
            declaredType: part.declaredType,
            ...(notes ? { annotations: notes } : {}),
          });
          stored += 1;
          results.push({ success: true, fileName: result.fileName });
        } catch (error) {
          const failure = failureOf(error);
          if (!failure) throw error;
          firstFailure ??= failure.status;
          if (failure.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(failure.retryAfterSeconds));
          results.push({ success: false, fileName: part.fileName, error: failure.message });
        }
      }
      if (stored > 0) await deps.apiKeyUsage?.note(target.projectId, target.apiKeyId);
      ctx.status = firstFailure ?? 200;
      ctx.type = 'text/plain';
      ctx.body = JSON.stringify({
        success: firstFailure === undefined,
        ...(firstFailure === undefined ? {} : { error: `${results.length - stored} of ${results.length} files were not stored` }),
        files: results,
      });
    } finally {
      // Stored files were moved into the blob store; whatever is left goes.
      await Promise.all(parts.map((p) => (p.file instanceof FileTooLargeError ? undefined : p.file.remove())));
    }
  });

  app.on('error', logRequestErrors(deps.log, 'ingestion request failed'));
  app.use((ctx, next) => (ctx.set('X-Content-Type-Options', 'nosniff'), next()));
  app.use(requestId());
  app.use(accessLog(deps.log));
  app.use(textErrors());
  app.use(bodyIdleTimeout(deps.uploadIdleTimeoutMs ?? DEFAULT_UPLOAD_IDLE_TIMEOUT_MS));
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: true, notImplemented: unknownMethod }));
  return app;
}
