import type { SampleSource } from './sampleFormat';

/**
 * Reads a sample file through its source a block at a time, keeping the last block: walking many
 * small chunk or box headers close together costs one read of the file, not one each.
 */
export class SourceWindow {
  private start = 0;
  private bytes: Buffer = Buffer.alloc(0);

  constructor(
    private readonly source: SampleSource,
    private readonly blockSize = 64 * 1024,
  ) {}

  get size(): number {
    return this.source.size;
  }

  /** Bytes [offset, offset + length), fewer only at the end of the file. */
  async get(offset: number, length: number): Promise<Buffer> {
    const wanted = Math.min(length, Math.max(0, this.size - offset));
    if (offset < this.start || offset + wanted > this.start + this.bytes.length) {
      this.bytes = await this.source.read(offset, Math.max(length, this.blockSize));
      this.start = offset;
      // A short answer before the end would make a walk stall or misjudge the file.
      if (this.bytes.length < wanted) throw new Error(`reading ${wanted} bytes at ${offset} of ${this.size} answered ${this.bytes.length}`);
    }
    return this.bytes.subarray(offset - this.start, offset - this.start + length);
  }
}

/** A four-character code as text when it is printable, else its bytes in hex. */
export function fourcc(bytes: Buffer): string {
  const text = bytes.toString('latin1');
  return /^[\x20-\x7e]{4}$/.test(text) ? `"${text}"` : `0x${bytes.toString('hex')}`;
}
