"""Generates test/domain/dsp/fixtures/spectral*.json: expected values from the reference spectral-analysis
block (edgeimpulse/processing-blocks, spectral_analysis/dsp.py generate_features) and from scipy's
filter design, for test/domain/dsp/spectralAnalysis.unit.spec.ts.

Usage: /tmp/ei-venv/bin/python bench/dsp/spectralFixtures.py <processing-blocks checkout> [out dir]
(venv: numpy<2, scipy<1.14, PyWavelets, PeakUtils==1.3.2, matplotlib). Only inputs and the numbers
the reference answers are written; none of the reference's code.
"""
import json
import math
import sys

import numpy as np
import pywt
import scipy
from scipy import signal

checkout = sys.argv[1]
out_dir = sys.argv[2] if len(sys.argv) > 2 else 'test/domain/dsp/fixtures'
sys.path.insert(0, checkout + '/spectral_analysis')
import dsp  # noqa: E402

DEFAULTS = {
    'scale-axes': 1, 'input-decimation-ratio': '1', 'filter-type': 'none', 'filter-cutoff': 3, 'filter-order': 6,
    'analysis-type': 'FFT', 'fft-length': 16, 'spectral-peaks-count': 3, 'spectral-peaks-threshold': 0.1,
    'spectral-power-edges': '0.1, 0.5, 1.0, 2.0, 5.0', 'do-log': True, 'do-fft-overlap': True,
    'wavelet-level': 1, 'wavelet': 'db4', 'extra-low-freq': False,
}


def accelerometer(samples, fs=62.5):
    """dsp-reference §10's accelerometer input, interleaved, for `samples` samples."""
    out = []
    for m in range(samples):
        for a in range(3):
            out.append(math.sin(2 * math.pi * (1 + a) * m / fs) + 0.5 * math.cos(2 * math.pi * 7.5 * m / fs) + 0.1 * a
                       + 0.05 * math.sin(2 * math.pi * 23 * m / fs + a))
    return out


rng = np.random.default_rng(20261126)


def noisy(samples, axes):
    return [float(v) for v in np.round(rng.normal(0, 3, samples * axes) + np.tile(np.arange(axes), samples), 6)]


def case(name, values, version, params, axes=('accX', 'accY', 'accZ'), fs=62.5):
    return {'name': name, 'values': values, 'axes': list(axes), 'frequency': fs, 'version': version,
            'params': {**DEFAULTS, **params}}


# The accelerometer inputs are stored once per rate (the shorter ones are prefixes), as the float32
# values the block starts from (it casts its input with dtype 'f'), so the test feeds the reference's
# exact samples rather than recomputing sines that may differ in the last bit.
ACCELEROMETER = {'62.5': accelerometer(1250, 62.5), '1000.0': accelerometer(3000, 1000.0)}


def stored(c):
    """A case whose input is a prefix of a stored accelerometer signal names it and its length."""
    full = ACCELEROMETER.get(str(float(c['frequency'])))
    n = len(c['values'])
    if full is not None and len(c['axes']) == 3 and c['values'] == full[:n]:
        return {**{k: v for k, v in c.items() if k != 'values'}, 'accelerometer': n // 3}
    return c


golden = accelerometer(125)
long_acc = accelerometer(1250)
cases = [
    case('golden v4 defaults', golden, 4, {}),
    case('golden v3 defaults', golden, 3, {}),
    case('golden v2 defaults', golden, 2, {}),
    case('golden v1 low 3 Hz order 6 fft 128', golden, 1, {'filter-type': 'low', 'filter-cutoff': 3, 'filter-order': 6, 'fft-length': 128}),
    case('golden v4 wavelet db4 level 1', golden, 4, {'analysis-type': 'Wavelet'}),
    case('golden v3 wavelet db4 level 1', golden, 3, {'analysis-type': 'Wavelet'}),
    case('v4 low-pass 3 Hz order 6 fft 64', golden, 4, {'filter-type': 'low', 'filter-cutoff': 3, 'fft-length': 64}),
    case('v4 high-pass 5 Hz order 4 fft 32 linear', golden, 4, {'filter-type': 'high', 'filter-cutoff': 5, 'filter-order': 4, 'fft-length': 32, 'do-log': False}),
    case('v4 high-pass at a bin edge (66dee58 start bin)', golden, 4, {'filter-type': 'high', 'filter-cutoff': 5.859375, 'filter-order': 2, 'fft-length': 16}),
    case('v4 low-pass order 0 masks bins only', golden, 4, {'filter-type': 'low', 'filter-cutoff': 10, 'filter-order': 0, 'fft-length': 32}),
    case('v4 no overlap fft 32', golden, 4, {'do-fft-overlap': False, 'fft-length': 32}),
    case('v4 scale 0.5 low-pass 8 Hz order 8', golden, 4, {'scale-axes': 0.5, 'filter-type': 'low', 'filter-cutoff': 8, 'filter-order': 8}),
    case('v3 low-pass 3 Hz (docs example, 4 per axis)', golden, 3, {'filter-type': 'low', 'filter-cutoff': 3}),
    case('v2 high-pass 2 Hz fft 64 no log', golden, 2, {'filter-type': 'high', 'filter-cutoff': 2, 'fft-length': 64, 'do-log': False}),
    case('v4 extra low frequency fft 32', long_acc, 4, {'extra-low-freq': True, 'fft-length': 32}),
    case('v4 extra low frequency low-pass 2 Hz', long_acc, 4, {'extra-low-freq': True, 'filter-type': 'low', 'filter-cutoff': 2, 'fft-length': 64}),
    case('v4 decimation 3', long_acc, 4, {'input-decimation-ratio': '3', 'fft-length': 32}),
    case('v4 decimation 10 low-pass 1 Hz', long_acc, 4, {'input-decimation-ratio': '10', 'filter-type': 'low', 'filter-cutoff': 1, 'filter-order': 4, 'fft-length': 32}),
    case('v4 decimation 30 fft 16', accelerometer(3000, fs=1000.0), 4, {'input-decimation-ratio': '30'}, fs=1000.0),
    case('v4 decimation 100 fft 16', accelerometer(2000, fs=1000.0), 4, {'input-decimation-ratio': '100'}, fs=1000.0),
    case('v4 noisy two axes fft 128 high-pass 10 Hz', noisy(400, 2), 4, {'filter-type': 'high', 'filter-cutoff': 10, 'fft-length': 128}, axes=('a', 'b'), fs=100.0),
    case('v1 defaults (fft 16, no filter)', golden, 1, {}),
    case('v1 high-pass 2 Hz 4 peaks fft 64 custom edges', golden, 1, {'filter-type': 'high', 'filter-cutoff': 2, 'filter-order': 4, 'fft-length': 64, 'spectral-peaks-count': 4, 'spectral-peaks-threshold': 0.05, 'spectral-power-edges': '0.5, 2, 4, 8, 16, 31'}),
    case('v1 noisy fft 256 (input shorter than fft)', noisy(200, 1), 1, {'fft-length': 256, 'spectral-peaks-threshold': 0.0}, axes=('x',), fs=100.0),
    case('v1 noisy fft 32 (input longer than fft)', noisy(200, 1), 1, {'fft-length': 32, 'spectral-peaks-count': 6, 'spectral-power-edges': '1, 5, 10, 20, 50'}, axes=('x',), fs=100.0),
]
for wav, level in [('haar', 3), ('sym5', 2), ('bior3.5', 2), ('coif2', 2), ('rbio2.8', 1), ('db10', 0), ('bior6.8', 1), ('coif3', 2)]:
    cases.append(case(f'v4 wavelet {wav} level {level}', long_acc[:3 * 400], 4, {'analysis-type': 'Wavelet', 'wavelet': wav, 'wavelet-level': level}))
cases.append(case('v4 wavelet db4 level 2 low-pass 5 Hz', long_acc[:3 * 300], 4, {'analysis-type': 'Wavelet', 'wavelet-level': 2, 'filter-type': 'low', 'filter-cutoff': 5}))
cases.append(case('v4 wavelet noisy sym8 level 3', noisy(512, 1), 4, {'analysis-type': 'Wavelet', 'wavelet': 'sym8', 'wavelet-level': 3}, axes=('x',), fs=100.0))

expected = []
for c in cases:
    params = {k.replace('-', '_'): v for k, v in c['params'].items()}
    out = dsp.generate_features(c['version'], False, np.array(c['values'], dtype=float), c['axes'], c['frequency'], **params)
    expected.append({**stored(c), 'expected': {'features': out['features'], 'labels': out['labels'],
                                       'output_config': out['output_config'], 'fft_used': out['fft_used']}})

versions = f'numpy {np.__version__}, scipy {scipy.__version__}, PyWavelets {pywt.__version__}'
with open(f'{out_dir}/spectralAnalysis.json', 'w') as f:
    json.dump({'generatedBy': 'bench/dsp/spectralFixtures.py: generate_features of edgeimpulse/processing-blocks '
               'spectral_analysis/dsp.py (HEAD 9b0ceb2) with ' + versions,
               'accelerometerFloat32': {k: [float(str(np.float32(v))) for v in vs] for k, vs in ACCELEROMETER.items()},
               'cases': expected}, f)

designs = []
for order in (2, 4, 6, 8):
    for wn in (0.01, 0.096, 0.3, 0.5, 0.9, 0.99):
        for btype in ('low', 'high'):
            designs.append({'kind': 'butter', 'order': order, 'wn': wn, 'btype': btype,
                            'sos': signal.butter(order, wn, btype, output='sos').tolist()})
cheby = []
for ratio in (3, 10):
    sos = signal.cheby1(8, 0.05, 0.8 / ratio, output='sos')
    x = np.array(noisy(64, 1), dtype='f')
    y, _ = signal.sosfilt(sos, x, zi=signal.sosfilt_zi(sos) * x[0])
    cheby.append({'ratio': ratio, 'sos': sos.tolist(), 'zi': signal.sosfilt_zi(sos).tolist(),
                  'x': x.astype(float).tolist(), 'decimated': y[::ratio].tolist()})
sos32 = np.float32(signal.butter(6, 0.096, 'low', output='sos'))
x32 = np.array(noisy(100, 1), dtype='f')
with open(f'{out_dir}/spectralFilters.json', 'w') as f:
    json.dump({'generatedBy': 'bench/dsp/spectralFixtures.py: scipy.signal butter/cheby1(output="sos"), sosfilt_zi '
               'and sosfilt with ' + versions,
               'butter': designs, 'cheby1': cheby,
               'float32Filter': {'sos': sos32.astype(float).tolist(), 'x': x32.astype(float).tolist(),
                                 'y': signal.sosfilt(sos32, x32).astype(float).tolist()}}, f)
print(f'{len(expected)} block cases, {len(designs)} butter designs')
