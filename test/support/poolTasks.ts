// CPU-bound functions for the thread pool tests, run in worker threads.
import { threadId } from 'node:worker_threads';

/** Spins the CPU for `ms` milliseconds, checking no signal (what a busy numeric loop does). */
export function spin(input: { ms: number }): { threadId: number } {
  const end = Date.now() + input.ms;
  while (Date.now() < end) {
    // busy on purpose
  }
  return { threadId };
}

export function sumOfSquares(input: { n: number }): { sum: number; threadId: number } {
  let sum = 0;
  for (let i = 1; i <= input.n; i++) sum += i * i;
  return { sum, threadId };
}

export function fails(input: { message: string }): never {
  throw new Error(input.message);
}

/** The sum of the bytes it was given. */
export function byteSum(input: { bytes: Uint8Array }): { sum: number; length: number } {
  let sum = 0;
  for (const b of input.bytes) sum += b;
  return { sum, length: input.bytes.length };
}
