import type { IncomingHttpHeaders } from 'node:http';
import { finished, type Readable } from 'node:stream';
import busboy from 'busboy';
import { ValidationError } from '../domain/shared/errors';
import { FileTooLargeError, receiveHashed, type ReceivedFile } from './receiveFile';

export interface ReceivedPart {
  field: string;
  fileName: string;
  /** Declared content type, lowercased without parameters. */
  declaredType: string | null;
  /** The part's file on disk, or why it was not kept (too large). */
  file: ReceivedFile | FileTooLargeError;
}

/**
 * Reads a multipart body part by part (busboy), each file streamed to disk. More than `maxFiles`
 * files refuse the whole request: nothing of it is kept.
 */
export async function receiveMultipart(
  body: Readable,
  headers: IncomingHttpHeaders,
  options: { dir: string; maxFiles: number; maxFileBytes: number },
): Promise<ReceivedPart[]> {
  const parts: Promise<ReceivedPart>[] = [];
  let tooMany = false;
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers, defParamCharset: 'utf8', limits: { files: options.maxFiles, fields: 20, fieldSize: 64 * 1024 } });
  } catch (error) {
    throw new ValidationError(`Malformed multipart/form-data request: ${(error as Error).message}`);
  }
  const done = new Promise<void>((resolve, reject) => {
    parser.on('file', (field, stream, info) => {
      parts.push(
        receiveHashed(stream, options.dir, options.maxFileBytes, 'drop').then((file) => ({
          field,
          fileName: info.filename ?? '',
          declaredType: info.mimeType ? info.mimeType.split(';')[0]!.trim().toLowerCase() || null : null,
          file,
        })),
      );
    });
    parser.on('filesLimit', () => {
      tooMany = true;
    });
    parser.on('close', resolve);
    parser.on('error', (error: Error) => reject(new ValidationError(`Malformed multipart/form-data body: ${error.message}`)));
    // Not the 'aborted' event: a client may have gone while the request waited for its API key
    // check, and a body destroyed before it is piped would leave the parser waiting for good.
    finished(body, (error) => {
      if (error) reject(new ValidationError('The upload was aborted before the body was complete', 'UPLOAD_ABORTED'));
    });
  });
  body.pipe(parser);
  const parseError = await done.then(
    () => undefined,
    (error: unknown) => error,
  );
  // An aborted or malformed body: the part being read is ended with an error, so its wait ends too.
  if (parseError !== undefined) parser.destroy();
  // Every part started is finished (or failed) before anything is decided, so nothing is left behind.
  const settled = await Promise.allSettled(parts);
  const received = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const partError = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')?.reason as unknown;
  if (parseError !== undefined || partError !== undefined || tooMany) {
    await Promise.all(received.map((p) => (p.file instanceof FileTooLargeError ? undefined : p.file.remove())));
    if (parseError !== undefined) throw parseError;
    if (partError !== undefined) throw partError;
    throw new ValidationError(`Too many files: at most ${options.maxFiles} a request; nothing was stored`);
  }
  return received;
}
