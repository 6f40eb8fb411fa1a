import { describe, expect, it } from 'vitest';
import { DSP_BLOCKS, dspBlockDefinition, impulseBlockCatalog } from '../../domain/impulse/blockCatalog';
import { defaultDspConfig, dspConfigGroups, validateDspConfig } from '../../domain/impulse/dspConfig';

const def = (type: string) => dspBlockDefinition(type)!;

describe('the block catalog', () => {
  it('offers the official DSP blocks with their latest implementation versions', () => {
    const versions = Object.fromEntries(impulseBlockCatalog().dspBlocks.map((b) => [b.type, b.latestImplementationVersion]));
    expect(versions).toEqual({ raw: 1, flatten: 1, image: 1, 'spectral-analysis': 4, mfe: 4, mfcc: 4, spectrogram: 4 });
    for (const b of impulseBlockCatalog().dspBlocks) expect(b).toMatchObject({ author: 'Edge Impulse', blockType: 'official', experimental: false });
  });

  it('offers the learn block types the brief asks for', () => {
    const types = impulseBlockCatalog().learnBlocks.map((b) => b.type);
    for (const t of ['keras', 'keras-regression', 'anomaly', 'anomaly-gmm', 'keras-transfer-image', 'keras-transfer-kws', 'keras-object-detection']) expect(types).toContain(t);
  });

  it('gives every default config of every block a clean bill', () => {
    for (const d of DSP_BLOCKS) {
      expect(validateDspConfig(d, defaultDspConfig(d), { implementationVersion: d.info.latestImplementationVersion, frequencyHz: 16000, windowSizeMs: 1000 }), d.info.type).toEqual([]);
    }
  });
});

describe('a DSP config', () => {
  it('takes the defaults of dsp-reference.md', () => {
    expect(defaultDspConfig(def('mfe'))).toMatchObject({ frame_length: '0.02', frame_stride: '0.01', num_filters: '40', fft_length: '256', noise_floor_db: '-52' });
    expect(defaultDspConfig(def('mfcc'))).toMatchObject({ num_cepstral: '13', num_filters: '32', frame_stride: '0.02', pre_cof: '0.98' });
    expect(defaultDspConfig(def('image'))).toEqual({ channels: 'RGB' });
  });

  it('serves each parameter with its current value, shown only for its implementation versions', () => {
    const groups = dspConfigGroups(def('spectral-analysis'), { implementationVersion: 4 }, { 'fft-length': '64' });
    const items = groups.flatMap((g) => g.items);
    expect(items.find((i) => i.param === 'fft-length')).toMatchObject({ value: '64', defaultValue: '16', type: 'int', shouldShow: true });
    expect(items.find((i) => i.param === 'spectral-peaks-count')).toMatchObject({ shouldShow: false });
    expect(items.find((i) => i.param === 'filter-cutoff')).toMatchObject({ showIf: { parameter: 'filter-type', operator: 'neq', value: 'none' } });
    expect(items.every((i) => !('versions' in i))).toBe(true);
  });

  it('applies the cross-field rules', () => {
    const mfcc = { ...defaultDspConfig(def('mfcc')), num_cepstral: '40' };
    expect(validateDspConfig(def('mfcc'), mfcc, { implementationVersion: 4 })).toEqual([expect.stringMatching(/^"num_cepstral": must be at most "num_filters" \(32\)/)]);
    const mfe = { ...defaultDspConfig(def('mfe')), high_frequency: '9000' };
    expect(validateDspConfig(def('mfe'), mfe, { implementationVersion: 4, frequencyHz: 16000 })).toEqual([expect.stringMatching(/^"high_frequency": must be at most half/)]);
    const frames = { ...defaultDspConfig(def('spectrogram')), frame_stride: '0.001' };
    expect(validateDspConfig(def('spectrogram'), frames, { implementationVersion: 4, frequencyHz: 16000, windowSizeMs: 1000 })).toEqual([expect.stringMatching(/^"frame_stride": \d+ frames in a window, at most 500/)]);
    const decimated = { ...defaultDspConfig(def('spectral-analysis')), 'input-decimation-ratio': '10' };
    expect(validateDspConfig(def('spectral-analysis'), decimated, { implementationVersion: 3 })).toEqual([expect.stringMatching(/^"input-decimation-ratio": a ratio above 1 needs implementation version 4/)]);
  });

  it('checks ranges', () => {
    expect(validateDspConfig(def('mfe'), { num_filters: '1' }, { implementationVersion: 4 })).toEqual(['"num_filters": must be at least 2, got 1']);
    expect(validateDspConfig(def('raw'), { 'scale-axes': '1e3' }, { implementationVersion: 1 })).toEqual([]);
  });
});
