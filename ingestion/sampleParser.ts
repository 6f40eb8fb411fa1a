// Parses received sample files on the event loop, a chunk at a time. Every format reads its file
// through its source in bounded pieces (JSON, CBOR and CSV stream through incremental decoders;
// WAV, images and videos are read by their headers), so a parse holds a few hundred KB whatever
// the file's size, and each read of a file on disk hands the event loop back to other requests.
// No worker and no queue: a 100 MB file shares the loop with the uploads that arrive meanwhile
// instead of making them wait behind it, and no heap limit can
// make the same file accepted once and refused the next time.
import { streamValues } from '../domain/sample/formats/decodeValues';
import { parseSampleFile } from '../domain/sample/formats/detectFormat';
import type { ParsedSample } from '../domain/sample/formats/sampleFormat';
import type { ReceivedFile } from './receiveFile';

export class SampleParser {
  private closed = false;

  async parse(file: ReceivedFile, fileName: string, declaredType: string | null, hmacKeys: readonly string[]): Promise<ParsedSample> {
    if (this.closed) throw new Error('The sample parser is closed');
    const source = file.source();
    try {
      return await parseSampleFile({ source, fileName, declaredType, hmacKeys });
    } finally {
      await source.close();
    }
  }

  /** The first `max` value rows of a stored JSON, CBOR or CSV file, read from its stream no further than they go. */
  async values(chunks: AsyncIterable<Uint8Array>, contentType: string, max: number): Promise<number[][]> {
    if (this.closed) throw new Error('The sample parser is closed');
    return streamValues(chunks, contentType, max);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
