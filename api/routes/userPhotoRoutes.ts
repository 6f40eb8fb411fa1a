// Profile photos: uploaded as multipart, checked by their content (PNG or JPEG, whole), stored in the
// blob store under their SHA-256 (the address the `ChangePhoto` command records), and served publicly
// while they are some user's current photo.
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { RouterMiddleware } from '@koa/router';
import type { CommandContext } from '../../commands/commandContext';
import { runUserCommand } from '../../commands/users/userCommands';
import { claimedImageType, ImageFormatError, inspectImage, type ImageType } from '../../domain/media/imageCheck';
import { NotFoundError, ValidationError } from '../../domain/shared/errors';
import type { UserDocument } from '../../projections/users/userDocument';
import { BlobNotFoundError } from '../../stores/blobstore/blobStore';
import type { ApiDeps } from '../apiDeps';
import { photoUrl } from '../views/userView';
import { requestContext } from '../auth/principal';
import { authorizeSelfOrStaff, signedInUser, targetUser } from '../auth/userTarget';
import { operation, requireFile, type MultipartOptions, type Operation, type OperationRequest } from '../http/operation';

export const PHOTO_MAX_BYTES = 2 * 1024 * 1024;
const PHOTO_UPLOAD: MultipartOptions = { files: ['photo'], maxFileBytes: PHOTO_MAX_BYTES };
const SHA256 = /^[0-9a-f]{64}$/;

export type PhotoFormat = ImageType;
export const PHOTO_CONTENT_TYPES: Record<PhotoFormat, string> = { png: 'image/png', jpeg: 'image/jpeg' };

/**
 * Checks that `bytes` are a whole PNG or JPEG image and answers which (see inspectImage: the header,
 * then the structure walked to its end, so a truncated or damaged file is refused). Throws a
 * ValidationError that names the problem.
 */
export function inspectPhoto(bytes: Buffer): { format: PhotoFormat; width: number; height: number } {
  try {
    const { type, width, height } = inspectImage(bytes);
    return { format: type, width, height };
  } catch (error) {
    if (!(error instanceof ImageFormatError)) throw error;
    if (!error.claimed) throw new ValidationError(`The photo must be a PNG or JPEG image; this file is ${error.detail}`, 'UNSUPPORTED_PHOTO_TYPE');
    throw new ValidationError(`The photo is ${error.message}`, 'INVALID_PHOTO');
  }
}

/**
 * uploadPhotoCurrentUser, deletePhotoCurrentUser and uploadPhotoUser; JWT only. By id, a user sets
 * their own photo, or staff anyone's. Bad input changes nothing: the file is checked before it is
 * stored, and a blob stored for a command that then fails is removed again.
 */
export function userPhotoOperations(deps: ApiDeps): Operation[] {
  type Request = OperationRequest<unknown, unknown, 'jwt'>;
  const ctxOf = (request: Request): CommandContext => requestContext(request.principal, request.requestId);

  /** Deletes a photo's blob unless a user still has it; called after the change is in the read model. */
  const release = async (sha256: string): Promise<void> => {
    // Blobs are shared by content: another user's photo or a sample may be the very same bytes.
    if (!(await deps.users.byPhoto(sha256)) && !(await deps.samples.referencesBlob(sha256))) await deps.blobs.delete(sha256);
  };

  const changePhoto = async (request: Request, target: UserDocument, photo: string | null): Promise<void> => {
    const ctx = ctxOf(request);
    const { appended } = await runUserCommand(deps.events, target.id, { type: 'ChangePhoto', data: { photo, now: ctx.now } }, ctx);
    // Settled before the old blob is released: `release` asks the read model who still uses it.
    if (appended) await request.settle(appended.position);
  };

  const upload = async (request: Request, target: UserDocument): Promise<Record<string, unknown>> => {
    const file = requireFile(request, 'photo');
    // At most PHOTO_MAX_BYTES (the multipart limit), so the whole file may be read for the check.
    inspectPhoto(await readFile(file.path));
    const url = photoUrl(deps.settings.publicUrl, file.sha256);
    if (target.photo === file.sha256) return { url };
    const existed = (await deps.blobs.stat(file.sha256)) !== undefined;
    const stored = await deps.blobs.put(createReadStream(file.path), { maxBytes: PHOTO_MAX_BYTES });
    try {
      if (stored.sha256 !== file.sha256) throw new Error(`the uploaded file changed on disk (${file.sha256} became ${stored.sha256})`);
      await changePhoto(request, target, stored.sha256);
    } catch (error) {
      if (!existed) await release(stored.sha256);
      throw error;
    }
    if (target.photo) await release(target.photo);
    return { url };
  };

  return [
    operation({
      operationId: 'uploadPhotoCurrentUser',
      method: 'post',
      path: '/api/user/photo',
      summary: 'Set the profile photo: a PNG or JPEG of at most 2 MB in the multipart file field "photo"',
      auth: 'jwt',
      multipart: PHOTO_UPLOAD,
      handler: (request) => upload(request, signedInUser(request.principal)),
    }),
    operation({
      operationId: 'deletePhotoCurrentUser',
      method: 'delete',
      path: '/api/user/photo',
      summary: 'Remove the profile photo',
      auth: 'jwt',
      async handler(request) {
        const target = signedInUser(request.principal);
        if (target.photo === null) return {};
        await changePhoto(request, target, null);
        await release(target.photo);
        return {};
      },
    }),
    operation({
      operationId: 'uploadPhotoUser',
      method: 'post',
      path: '/api/users/:userId/photo',
      summary: "Set a user's profile photo, as uploadPhotoCurrentUser (oneself; staff may act on others)",
      auth: 'jwt',
      multipart: PHOTO_UPLOAD,
      authorize: authorizeSelfOrStaff(deps.settings.staffUsernames),
      handler: async (request) => upload(request, await targetUser(deps.users, request.principal, request.params)),
    }),
  ];
}

/**
 * GET /v1/user-photos/:sha256, public: a blob is served only while it is some user's current photo,
 * with the type its content has (only checked PNGs and JPEGs become photos). Anything else is a 404.
 */
export function serveUserPhoto(deps: ApiDeps): RouterMiddleware {
  const notFound = () => new NotFoundError('No such photo', 'PHOTO_NOT_FOUND');
  return async (ctx) => {
    const sha256 = String(ctx.params.sha256 ?? '');
    if (!SHA256.test(sha256) || !(await deps.users.byPhoto(sha256))) throw notFound();
    // The address is the content: revalidating costs a 304, and a removed photo stops being served.
    ctx.status = 200;
    ctx.etag = `"${sha256}"`;
    ctx.set('Cache-Control', 'public, no-cache');
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    let stream: Readable;
    try {
      stream = await deps.blobs.open(sha256);
    } catch (error) {
      if (error instanceof BlobNotFoundError) throw notFound();
      throw error;
    }
    const { head, body } = await peek(stream);
    const format = claimedImageType(head);
    ctx.type = format ? PHOTO_CONTENT_TYPES[format] : 'application/octet-stream';
    ctx.body = body;
  };
}

/** The stream's first chunk (for the content type) and a stream of the whole content. */
async function peek(stream: Readable): Promise<{ head: Buffer; body: Readable }> {
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
  let first: IteratorResult<Uint8Array>;
  try {
    first = await chunks.next();
  } catch (error) {
    stream.destroy();
    throw error;
  }
  const head = first.done ? Buffer.alloc(0) : Buffer.from(first.value);
  async function* all(): AsyncGenerator<Uint8Array> {
    try {
      if (!first.done) yield head;
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
    } finally {
      // A client that goes away ends the generator early: the blob's stream is released too.
      await chunks.return?.();
    }
  }
  return { head, body: Readable.from(all(), { objectMode: false }) };
}
