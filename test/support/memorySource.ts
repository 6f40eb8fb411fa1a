import type { ParseInput, SampleSource } from '../../domain/sample/formats/sampleFormat';

/** A SampleSource over bytes held in memory, for parser tests. */
export function memorySource(content: Buffer | string): SampleSource {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  return {
    size: bytes.length,
    async read(offset, length) {
      return Buffer.from(bytes.subarray(offset, Math.min(bytes.length, offset + length)));
    },
    async readAll() {
      return Buffer.from(bytes);
    },
  };
}

/** A ParseInput for `content`, with defaults a test can override. */
export function parseInput(content: Buffer | string, overrides: Partial<Omit<ParseInput, 'source'>> = {}): ParseInput {
  return {
    source: memorySource(content),
    fileName: 'sample.json',
    declaredType: null,
    hmacKeys: [],
    ...overrides,
  };
}
