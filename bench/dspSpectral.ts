// The spectral-analysis block (domain/dsp/spectralAnalysis.ts) next to the reference Python block
// (edgeimpulse/processing-blocks spectral_analysis/dsp.py), on the same windows in the same run:
// windows per second of each (one window per call, as the generate-features job calls them) and the
// largest absolute and relative error of our features against the reference's, per configuration.
// The reference runs as a child process (bench/dsp/spectralOracle.py) that times itself, so Python's
// start-up is not counted. Needs a Python with numpy<2, scipy<1.14, PyWavelets and PeakUtils 1.3.2
// (dsp-reference §9) and a checkout of the reference:
//   SPECTRAL_PYTHON=/tmp/ei-venv/bin/python PROCESSING_BLOCKS=/path/to/processing-blocks npx tsx bench/dspSpectral.ts
// Without them it says so and measures nothing.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { DspParams } from '../domain/dsp/processingBlock';
import { spectralAnalysisBlock } from '../domain/dsp/spectralAnalysis';
import type { BenchResult } from './benchResult';

const WINDOWS = 200;
/** Passes over the windows for the timing (each side), after one untimed pass. */
const PASSES = 3;
/** Relative error is reported for reference values of at least this magnitude (near-zero values would only show noise). */
const RELATIVE_FLOOR = 1e-3;

const DEFAULTS: DspParams = {
  'scale-axes': 1, 'input-decimation-ratio': '1', 'filter-type': 'none', 'filter-cutoff': 3, 'filter-order': 6, 'analysis-type': 'FFT',
  'fft-length': 16, 'spectral-peaks-count': 3, 'spectral-peaks-threshold': 0.1, 'spectral-power-edges': '0.1, 0.5, 1.0, 2.0, 5.0',
  'do-log': true, 'do-fft-overlap': true, 'wavelet-level': 1, 'wavelet': 'db4', 'extra-low-freq': false,
};

interface Configuration {
  name: string;
  version: number;
  params: DspParams;
  /** Samples per axis (3 axes at 62.5 Hz). */
  samples: number;
}

const CONFIGURATIONS: Configuration[] = [
  { name: 'v4 FFT defaults (2 s, 3 axes)', version: 4, params: {}, samples: 125 },
  { name: 'v4 FFT low-pass 3 Hz order 6, FFT 64', version: 4, params: { 'filter-type': 'low', 'filter-cutoff': 3, 'fft-length': 64 }, samples: 125 },
  { name: 'v4 FFT extra low frequency, FFT 32 (20 s)', version: 4, params: { 'extra-low-freq': true, 'fft-length': 32 }, samples: 1250 },
  { name: 'v4 FFT decimation 10, low-pass 1 Hz (20 s)', version: 4, params: { 'input-decimation-ratio': '10', 'filter-type': 'low', 'filter-cutoff': 1, 'filter-order': 4 }, samples: 1250 },
  { name: 'v4 wavelet db4 level 1', version: 4, params: { 'analysis-type': 'Wavelet' }, samples: 125 },
  { name: 'v3 wavelet sym5 level 2 (4 s)', version: 3, params: { 'analysis-type': 'Wavelet', wavelet: 'sym5', 'wavelet-level': 2 }, samples: 250 },
  { name: 'v3 FFT high-pass 5 Hz order 4', version: 3, params: { 'filter-type': 'high', 'filter-cutoff': 5, 'filter-order': 4 }, samples: 125 },
  { name: 'v2 FFT defaults', version: 2, params: {}, samples: 125 },
  { name: 'v1 low-pass 3 Hz order 6, FFT 128', version: 1, params: { 'filter-type': 'low', 'filter-cutoff': 3, 'fft-length': 128 }, samples: 125 },
];

/** Accelerometer-like windows: three tones, a vibration and seeded noise, different per window. */
function windows(samples: number, count: number): number[][] {
  let state = 12345;
  const noise = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32 - 0.5) * 0.2;
  return Array.from({ length: count }, (_, w) => {
    const values: number[] = [];
    for (let m = 0; m < samples; m++) {
      for (let a = 0; a < 3; a++) {
        const t = m / 62.5;
        values.push(Math.round((Math.sin(2 * Math.PI * (1 + a + w * 0.01) * t) + 0.5 * Math.cos(2 * Math.PI * 7.5 * t + w) + 0.1 * a + noise()) * 1e5) / 1e5);
      }
    }
    return values;
  });
}

interface OracleAnswer {
  answers: { name: string; features?: number[]; error?: string }[];
  windowsPerSecond?: number;
}

function runOracle(python: string, checkout: string, configuration: Configuration, inputs: number[][]): OracleAnswer {
  const script = fileURLToPath(new URL('./dsp/spectralOracle.py', import.meta.url));
  const cases = inputs.map((values, i) => ({ name: String(i), values, axes: ['accX', 'accY', 'accZ'], frequency: 62.5, version: configuration.version, params: { ...DEFAULTS, ...configuration.params } }));
  const out = execFileSync(python, [script, checkout], { input: JSON.stringify({ cases, repeat: PASSES }), maxBuffer: 256 * 1024 * 1024, stdio: ['pipe', 'pipe', 'ignore'] });
  return JSON.parse(out.toString('utf8')) as OracleAnswer;
}

export async function benchDspSpectral(): Promise<BenchResult> {
  const name = 'spectral-analysis block vs the reference Python block';
  const python = process.env.SPECTRAL_PYTHON;
  const checkout = process.env.PROCESSING_BLOCKS;
  if (!python || !checkout || !existsSync(python) || !existsSync(`${checkout}/spectral_analysis/dsp.py`)) {
    return {
      name,
      lines: [
        'skipped: set SPECTRAL_PYTHON (a Python with numpy<2, scipy<1.14, PyWavelets, PeakUtils==1.3.2) and PROCESSING_BLOCKS (a checkout of edgeimpulse/processing-blocks)',
      ],
    };
  }
  const lines = [`${WINDOWS} windows per configuration, ${PASSES} timed passes each side; relative error over reference values ≥ ${RELATIVE_FLOOR}`];
  const ratios: number[] = [];
  for (const configuration of CONFIGURATIONS) {
    const inputs = windows(configuration.samples, WINDOWS);
    const params = { ...DEFAULTS, ...configuration.params };
    const runOne = (values: number[]) =>
      spectralAnalysisBlock.run({ values, axes: ['accX', 'accY', 'accZ'], frequency: 62.5 }, params, { implementationVersion: configuration.version, drawGraphs: false });
    const ours = inputs.map(runOne);
    const start = process.hrtime.bigint();
    for (let pass = 0; pass < PASSES; pass++) for (const values of inputs) runOne(values);
    const oursPerSecond = (PASSES * WINDOWS) / (Number(process.hrtime.bigint() - start) / 1e9);

    const oracle = runOracle(python, checkout, configuration, inputs);
    let maxAbs = 0;
    let maxRel = 0;
    let compared = 0;
    oracle.answers.forEach((answer, i) => {
      if (!answer.features) throw new Error(`the reference refused window ${i} of "${configuration.name}": ${answer.error}`);
      const features = ours[i]!.features;
      if (features.length !== answer.features.length) throw new Error(`"${configuration.name}" window ${i}: ${features.length} features, the reference ${answer.features.length}`);
      answer.features.forEach((e, k) => {
        const d = Math.abs(features[k]! - e);
        maxAbs = Math.max(maxAbs, d);
        if (Math.abs(e) >= RELATIVE_FLOOR) maxRel = Math.max(maxRel, d / Math.abs(e));
        compared += 1;
      });
    });
    const theirs = oracle.windowsPerSecond ?? Number.NaN;
    ratios.push(oursPerSecond / theirs);
    lines.push(`${configuration.name}:`);
    lines.push(
      `  ours ${Math.round(oursPerSecond).toLocaleString('en-US')} windows/s, reference ${Math.round(theirs).toLocaleString('en-US')} windows/s, ratio ${(oursPerSecond / theirs).toFixed(1)}x; ` +
        `${compared.toLocaleString('en-US')} features, max abs error ${maxAbs.toExponential(2)}, max rel error ${maxRel.toExponential(2)}`,
    );
  }
  lines.push(`slowest ratio ${Math.min(...ratios).toFixed(1)}x (aim: 2x or better)`);
  return { name, lines };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const result = await benchDspSpectral();
  console.log(result.name);
  for (const line of result.lines) console.log(`  ${line}`);
}
