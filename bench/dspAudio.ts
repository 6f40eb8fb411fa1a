// The raw, flatten, image, mfe, mfcc and spectrogram blocks next to the official Python blocks, on the
// same windows in the same run: windows per second of each (one window per call, single thread, as
// the reference's /batch loops) and their ratio, and the largest absolute and relative difference
// of the features (relative only where the reference's value is at least 1e-6 in size). The two take
// turns in short rounds, so load from elsewhere on the machine falls on both alike; the ratio is over
// all rounds, with the median and middle half of the per-round ratios beside it.
//
// The reference is a checkout of edgeimpulse/processing-blocks (never copied here) run by a Python
// with 'numpy<2' 'scipy<1.14' matplotlib (see bench/dsp/generate_fixtures.py):
//   DSP_REFERENCE_CHECKOUT=/tmp/processing-blocks DSP_REFERENCE_PYTHON=/tmp/ei-venv/bin/python npx tsx bench/dspAudio.ts
// Without both it reports itself skipped.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { processingBlocks } from '../domain/dsp/blocks';
import type { DspParams } from '../domain/dsp/processingBlock';
import type { BenchResult } from './benchResult';
import { spread } from './benchKit';
import { difference } from '../test/domain/dsp/referenceFixtures';

const ROUNDS = 5;
const ROUND_SECONDS = 0.4;
const WINDOWS = 8;

interface Case {
  title: string;
  block: string;
  version: number;
  params: DspParams;
  axes: string[];
  frequency: number;
  windows: number[][];
}

/** Deterministic noise, so both sides see the same windows without sharing a random generator. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function audioWindows(frequency: number, seconds: number): number[][] {
  return Array.from({ length: WINDOWS }, (_, w) => {
    const noise = lcg(w + 1);
    const f1 = 200 + 150 * w;
    return Array.from({ length: Math.round(frequency * seconds) }, (_, n) =>
      Math.round(9000 * Math.sin((2 * Math.PI * f1 * n) / frequency) + 4000 * Math.sin((2 * Math.PI * 3000 * n) / frequency) + 2000 * (noise() - 0.5)),
    );
  });
}

function accelerometerWindows(): number[][] {
  return Array.from({ length: WINDOWS }, (_, w) => {
    const noise = lcg(100 + w);
    return Array.from({ length: 125 * 3 }, (_, i) => Math.sin((2 * Math.PI * (1 + (i % 3)) * Math.floor(i / 3)) / 62.5 + w) + 0.1 * (noise() - 0.5));
  });
}

function imageWindows(side: number): number[][] {
  return Array.from({ length: WINDOWS }, (_, w) => {
    const noise = lcg(200 + w);
    return [side, side, ...Array.from({ length: side * side }, () => Math.floor(noise() * 2 ** 24))];
  });
}

function cases(): Case[] {
  const audio = audioWindows(16000, 1);
  const accel = accelerometerWindows();
  const image = imageWindows(96);
  const a = (block: string, version: number, title: string, params: DspParams = {}): Case => ({ title, block, version, params, axes: ['audio'], frequency: 16000, windows: audio });
  return [
    { title: 'raw (2 s, 3 axes at 62.5 Hz)', block: 'raw', version: 1, params: {}, axes: ['x', 'y', 'z'], frequency: 62.5, windows: accel },
    { title: 'flatten (2 s, 3 axes at 62.5 Hz)', block: 'flatten', version: 1, params: {}, axes: ['x', 'y', 'z'], frequency: 62.5, windows: accel },
    { title: 'image (96×96 RGB)', block: 'image', version: 1, params: { channels: 'RGB' }, axes: ['image'], frequency: 0, windows: image },
    { title: 'image (96×96 Grayscale)', block: 'image', version: 1, params: { channels: 'Grayscale' }, axes: ['image'], frequency: 0, windows: image },
    a('mfe', 4, 'mfe v4 (1 s at 16 kHz, defaults)'),
    a('mfe', 3, 'mfe v3 (1 s at 16 kHz, 20 filters, fft 512)', { num_filters: 20, fft_length: 512 }),
    a('mfe', 2, 'mfe v2 (1 s at 16 kHz, 20 filters, fft 512)', { num_filters: 20, fft_length: 512 }),
    a('mfe', 1, 'mfe v1 (1 s at 16 kHz, 20 filters, fft 512)', { num_filters: 20, fft_length: 512 }),
    a('mfcc', 4, 'mfcc v4 (1 s at 16 kHz, defaults)'),
    a('mfcc', 3, 'mfcc v3 (1 s at 16 kHz, 20 filters, fft 512)', { num_filters: 20, fft_length: 512 }),
    a('mfcc', 2, 'mfcc v2 (1 s at 16 kHz, 20 filters, fft 512)', { num_filters: 20, fft_length: 512 }),
    a('mfcc', 1, 'mfcc v1 (1 s at 16 kHz, 20 filters, fft 512)', { num_filters: 20, fft_length: 512 }),
    a('spectrogram', 4, 'spectrogram v4 (1 s at 16 kHz, defaults)'),
    a('spectrogram', 3, 'spectrogram v3 (1 s at 16 kHz, defaults)'),
    a('spectrogram', 2, 'spectrogram v2 (1 s at 16 kHz, defaults)'),
    a('spectrogram', 1, 'spectrogram v1 (1 s at 16 kHz, defaults)'),
  ];
}

/** The reference block in a child process that answers one JSON line per request line. */
class Reference {
  private readonly child;
  private readonly lines: string[] = [];
  private waiting: ((line: string) => void) | undefined;
  private buffer = '';
  private readonly stderr: Buffer[] = [];
  private failure: Error | undefined;

  constructor(python: string, checkout: string, block: string) {
    const runner = fileURLToPath(new URL('./dsp/reference_runner.py', import.meta.url));
    this.child = spawn(python, [runner, checkout, block], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (b: Buffer) => {
      this.buffer += b.toString();
      let newline;
      while ((newline = this.buffer.indexOf('\n')) >= 0) {
        this.lines.push(this.buffer.slice(0, newline));
        this.buffer = this.buffer.slice(newline + 1);
      }
      this.deliver();
    });
    this.child.stderr.on('data', (b: Buffer) => this.stderr.push(b));
    this.child.on('close', (code) => {
      this.failure = new Error(`reference ${block} exited ${code}: ${Buffer.concat(this.stderr).toString().slice(-500)}`);
      this.deliver();
    });
  }

  private deliver(): void {
    if (!this.waiting) return;
    const line = this.lines.shift();
    if (line !== undefined) {
      const w = this.waiting;
      this.waiting = undefined;
      w(line);
    } else if (this.failure) {
      const w = this.waiting;
      this.waiting = undefined;
      w(JSON.stringify({ error: this.failure.message }));
    }
  }

  async ask<T>(request: unknown): Promise<T> {
    this.child.stdin.write(`${JSON.stringify(request)}\n`);
    const line = await new Promise<string>((resolve) => {
      this.waiting = resolve;
      this.deliver();
    });
    const answer = JSON.parse(line) as T & { error?: string };
    if (answer.error) throw new Error(answer.error);
    return answer;
  }

  close(): void {
    this.child.stdin.end();
  }
}

function oursRound(c: Case, seconds: number): { windows: number; seconds: number } {
  const block = processingBlocks.get(c.block)!;
  let done = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  do {
    for (const w of c.windows) block.run({ values: w, axes: c.axes, frequency: c.frequency }, c.params, { implementationVersion: c.version, drawGraphs: false });
    done += c.windows.length;
    elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  } while (elapsed < seconds);
  return { windows: done, seconds: elapsed };
}

function oursFeatures(c: Case): number[][] {
  const block = processingBlocks.get(c.block)!;
  return c.windows.map((w) => Array.from(block.run({ values: w, axes: c.axes, frequency: c.frequency }, c.params, { implementationVersion: c.version, drawGraphs: false }).features));
}

const rate = (x: number) => `${Math.round(x).toLocaleString('en-US')}/s`;

export async function benchDspAudio(): Promise<BenchResult> {
  const name = 'DSP blocks raw, flatten, image, mfe, mfcc, spectrogram vs the official Python blocks';
  const checkout = process.env.DSP_REFERENCE_CHECKOUT;
  const python = process.env.DSP_REFERENCE_PYTHON;
  if (!checkout || !python || !existsSync(checkout) || !existsSync(python)) {
    return {
      name,
      lines: [
        'skipped: set DSP_REFERENCE_CHECKOUT (a checkout of edgeimpulse/processing-blocks) and DSP_REFERENCE_PYTHON (a Python with numpy<2, scipy<1.14, matplotlib) to run it',
      ],
    };
  }
  const lines: string[] = [];
  for (const c of cases()) {
    const reference = new Reference(python, checkout, c.block);
    try {
      const { params, version, axes, frequency, windows } = c;
      const expected = (await reference.ask<{ features: number[][] }>({ params, version, axes, frequency, windows })).features;
      const ours = { windows: 0, seconds: 0 };
      const theirs = { windows: 0, seconds: 0 };
      const ratios: number[] = [];
      oursRound(c, ROUND_SECONDS / 4); // warm-up for the JIT
      for (let round = 0; round < ROUNDS; round++) {
        const r = await reference.ask<{ windows: number; seconds: number }>({ round: ROUND_SECONDS });
        const o = oursRound(c, ROUND_SECONDS);
        ours.windows += o.windows;
        ours.seconds += o.seconds;
        theirs.windows += r.windows;
        theirs.seconds += r.seconds;
        ratios.push(o.windows / o.seconds / (r.windows / r.seconds));
      }
      let maxAbs = 0;
      let maxRel = 0;
      oursFeatures(c).forEach((f, w) => {
        const e = expected[w]!;
        maxAbs = Math.max(maxAbs, difference(f, e).maxAbs);
        f.forEach((x, i) => {
          if (Math.abs(e[i]!) >= 1e-6) maxRel = Math.max(maxRel, Math.abs(x - e[i]!) / Math.abs(e[i]!));
        });
      });
      const oursRate = ours.windows / ours.seconds;
      const theirRate = theirs.windows / theirs.seconds;
      lines.push(
        `${c.title}: ${rate(oursRate)} vs reference ${rate(theirRate)}, ratio ${(oursRate / theirRate).toFixed(2)} (${spread(ratios)}); ` +
          `largest error abs ${maxAbs.toExponential(2)}, rel ${maxRel.toExponential(2)}`,
      );
    } finally {
      reference.close();
    }
  }
  return { name, lines };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const result = await benchDspAudio();
  console.log(result.name);
  for (const line of result.lines) console.log(`  ${line}`);
}
