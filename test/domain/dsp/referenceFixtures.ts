// The reference's answers recorded by bench/dsp/generate_fixtures.py (test/domain/dsp/fixtures/*.json), the
// dsp-reference 10 inputs they name, and the error measures the tests and bench/dspAudio.ts share.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { OutputConfig } from '../../../domain/dsp/processingBlock';

export interface ReferenceCase {
  name: string;
  implementationVersion: number;
  axes: string[];
  frequency: number;
  params: Record<string, string | number | boolean>;
  formula?: 'golden-audio' | 'golden-accelerometer';
  values?: number[];
  features?: number[];
  outputConfig?: OutputConfig;
  fftUsed?: number[];
  labels?: string[];
  /** The reference refused the case: exception type and message. */
  error?: string;
}

export interface ReferenceFixture {
  note: string;
  block: string;
  cases: ReferenceCase[];
  referenceTest?: { note: string; values: number[]; expected: number[] };
}

export function loadFixture(block: string): ReferenceFixture {
  const path = fileURLToPath(new URL(`./fixtures/${block}.json`, import.meta.url));
  return JSON.parse(readFileSync(path, 'utf8')) as ReferenceFixture;
}

/** dsp-reference 10: 440 Hz + 3 kHz at 16 kHz, 1 s, rounded to integers like int16 audio. */
export function goldenAudio(): number[] {
  return Array.from({ length: 16000 }, (_, n) => Math.round(12000 * Math.sin((2 * Math.PI * 440 * n) / 16000) + 6000 * Math.sin((2 * Math.PI * 3000 * n) / 16000)));
}

/** dsp-reference 10: 125 samples of 3 axes at 62.5 Hz, interleaved. */
export function goldenAccelerometer(): number[] {
  const out: number[] = [];
  for (let m = 0; m < 125; m++) {
    for (let a = 0; a < 3; a++) {
      out.push(Math.sin((2 * Math.PI * (1 + a) * m) / 62.5) + 0.5 * Math.cos((2 * Math.PI * 7.5 * m) / 62.5) + 0.1 * a + 0.05 * Math.sin((2 * Math.PI * 23 * m) / 62.5 + a));
    }
  }
  return out;
}

export function inputOf(c: ReferenceCase): number[] {
  if (c.formula === 'golden-audio') return goldenAudio();
  if (c.formula === 'golden-accelerometer') return goldenAccelerometer();
  if (!c.values) throw new Error(`fixture case "${c.name}" has no input`);
  return c.values;
}

export interface Difference {
  maxAbs: number;
  maxRel: number;
  /** Values farther apart than `atol + rtol·|expected|`. */
  outside: number;
  /** Values that differ at all. */
  differing: number;
}

export function difference(actual: ArrayLike<number>, expected: ArrayLike<number>, atol = 0, rtol = 0): Difference {
  if (actual.length !== expected.length) throw new Error(`${actual.length} features, the reference has ${expected.length}`);
  let maxAbs = 0;
  let maxRel = 0;
  let outside = 0;
  let differing = 0;
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i]!;
    const e = expected[i]!;
    const d = Math.abs(a - e);
    if (!(d <= Number.MAX_VALUE)) return { maxAbs: Number.NaN, maxRel: Number.NaN, outside: expected.length, differing: expected.length };
    if (d > 0) differing++;
    maxAbs = Math.max(maxAbs, d);
    if (e !== 0) maxRel = Math.max(maxRel, d / Math.abs(e));
    if (d > atol + rtol * Math.abs(e)) outside++;
  }
  return { maxAbs, maxRel, outside, differing };
}
