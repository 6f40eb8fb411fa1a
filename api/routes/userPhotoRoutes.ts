// Profile photos: uploaded as multipart, checked by their content (PNG or JPEG, whole), stored in the
// blob store under their SHA-256 (the address the `ChangePhoto` command records), and served publicly
// while they are some user's current photo.
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import type { RouterMiddleware } from '@koa/router';
import { imageSize } from 'image-size';
import type { CommandContext } from '../../commands/commandContext';
import { runUserCommand } from '../../commands/users/userCommands';
import { NotFoundError, ValidationError } from '../../domain/shared/errors';
import type { UserDocument } from '../../projections/users/userDocument';
import { BlobNotFoundError } from '../../stores/blobstore/blobStore';
import type { ApiDeps } from '../apiDeps';
import { photoUrl } from '../views/userView';
import { actorOf } from '../auth/principal';
import { authorizeSelfOrStaff, signedInUser, targetUser } from '../auth/userTarget';
import { operation, requireFile, type MultipartOptions, type Operation, type OperationRequest } from '../http/operation';

export const PHOTO_MAX_BYTES = 2 * 1024 * 1024;
const PHOTO_UPLOAD: MultipartOptions = { files: ['photo'], maxFileBytes: PHOTO_MAX_BYTES };
const SHA256 = /^[0-9a-f]{64}$/;

export type PhotoFormat = 'png' | 'jpeg';
export const PHOTO_CONTENT_TYPES: Record<PhotoFormat, string> = { png: 'image/png', jpeg: 'image/jpeg' };

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG_SOI = Buffer.from([0xff, 0xd8, 0xff]);

/** The format its first bytes claim, without judging the rest. */
export function claimedPhotoFormat(head: Uint8Array): PhotoFormat | null {
  const bytes = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  if (bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return 'png';
  if (bytes.subarray(0, 3).equals(JPEG_SOI)) return 'jpeg';
  return null;
}

const FORMAT_NAMES: Record<PhotoFormat, string> = { png: 'PNG', jpeg: 'JPEG' };

/**
 * Checks that `bytes` are a whole PNG or JPEG image and answers which. The header (type and
 * dimensions) is decoded by image-size; the structure is then walked to its end (PNG chunks with
 * their CRCs up to IEND, JPEG segments and scans up to EOI), so a truncated or damaged file is
 * refused. Throws a ValidationError that names the problem.
 */
export function inspectPhoto(bytes: Buffer): { format: PhotoFormat; width: number; height: number } {
  const claimed = claimedPhotoFormat(bytes);
  let decoded: { type?: string | undefined; width: number; height: number } | undefined;
  try {
    decoded = imageSize(bytes);
  } catch {
    decoded = undefined;
  }
  if (!claimed) {
    const what = decoded?.type ? `a ${decoded.type.toUpperCase()} image` : 'not an image';
    throw new ValidationError(`The photo must be a PNG or JPEG image; this file is ${what}`, 'UNSUPPORTED_PHOTO_TYPE');
  }
  const name = FORMAT_NAMES[claimed];
  const expectedType = claimed === 'png' ? 'png' : 'jpg';
  if (!decoded || decoded.type !== expectedType || !(decoded.width > 0) || !(decoded.height > 0)) {
    throw new ValidationError(`The photo is not a valid ${name}: its header is damaged or the file is truncated`, 'INVALID_PHOTO');
  }
  const problem = claimed === 'png' ? pngProblem(bytes) : jpegProblem(bytes);
  if (problem) throw new ValidationError(`The photo is not a valid ${name}: ${problem}`, 'INVALID_PHOTO');
  return { format: claimed, width: decoded.width, height: decoded.height };
}

/** Walks the chunks from the signature to IEND; what follows IEND is ignored. */
function pngProblem(bytes: Buffer): string | null {
  let pos = PNG_SIGNATURE.length;
  while (pos + 12 <= bytes.length) {
    const length = bytes.readUInt32BE(pos);
    const type = bytes.toString('latin1', pos + 4, pos + 8);
    const end = pos + 12 + length;
    if (end > bytes.length) break;
    if (bytes.readUInt32BE(end - 4) !== crc32(bytes.subarray(pos + 4, end - 4))) return `the checksum of its ${type} chunk is wrong (the file is damaged)`;
    if (type === 'IEND') return null;
    pos = end;
  }
  return 'the file is truncated (it ends before the IEND chunk)';
}

/** Walks the segments and entropy-coded scans from SOI to EOI; what follows EOI is ignored. */
function jpegProblem(bytes: Buffer): string | null {
  const truncated = 'the file is truncated (it ends before the end-of-image marker)';
  let pos = 2;
  while (pos < bytes.length) {
    if (bytes[pos] !== 0xff) return `unexpected data where a marker should be, at byte ${pos}`;
    // A marker may be preceded by any number of 0xFF fill bytes.
    while (bytes[pos + 1] === 0xff) pos += 1;
    const marker = bytes[pos + 1];
    if (marker === undefined) return truncated;
    if (marker === 0xd9) return null;
    // Markers without a length: TEM and the restart markers.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      pos += 2;
      continue;
    }
    if (pos + 4 > bytes.length) return truncated;
    const end = pos + 2 + bytes.readUInt16BE(pos + 2);
    if (end > bytes.length) return truncated;
    pos = end;
    if (marker === 0xda) {
      // Entropy-coded data: 0xFF is followed by 0x00 (a stuffed byte) or a restart marker; any other
      // marker ends the scan.
      for (;;) {
        const ff = bytes.indexOf(0xff, pos);
        if (ff < 0 || ff + 1 >= bytes.length) return truncated;
        const next = bytes[ff + 1]!;
        if (next === 0x00 || (next >= 0xd0 && next <= 0xd7)) {
          pos = ff + 2;
          continue;
        }
        if (next === 0xff) {
          pos = ff + 1;
          continue;
        }
        pos = ff;
        break;
      }
    }
  }
  return truncated;
}


/**
 * uploadPhotoCurrentUser, deletePhotoCurrentUser and uploadPhotoUser; JWT only. By id, a user sets
 * their own photo, or staff anyone's. Bad input changes nothing: the file is checked before it is
 * stored, and a blob stored for a command that then fails is removed again.
 */
export function userPhotoOperations(deps: ApiDeps): Operation[] {
  type Request = OperationRequest<unknown, unknown, 'jwt'>;
  const ctxOf = (request: Request): CommandContext => ({ actor: actorOf(request.principal), correlationId: request.requestId, now: new Date() });

  /** Deletes a photo's blob unless a user still has it; called after the change is in the read model. */
  const release = async (sha256: string): Promise<void> => {
    if (!(await deps.users.byPhoto(sha256))) await deps.blobs.delete(sha256);
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
    const format = claimedPhotoFormat(head);
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
