"""Writes test/domain/dsp/fixtures/<block>.json: what the official blocks answer on the inputs below.

Usage: /tmp/ei-venv-audio/bin/python bench/dsp/generate_fixtures.py <processing-blocks checkout> [out dir]
The venv needs 'numpy<2' 'scipy<1.14' python_speech_features==0.6 speechpy PyWavelets matplotlib.
Each case stores its input (or the name of a dsp-reference 10 formula), the parameters, and either the
reference's features and output_config or the reference's error message. Nothing here is reference
code: it only calls each block's generate_features."""
import ast
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_blocks as rb  # noqa: E402

BLOCKS = ['raw', 'flatten', 'image', 'mfe', 'mfcc', 'spectrogram']


def noise(seed, n, scale):
    return np.round(np.random.default_rng(seed).normal(0, scale, n)).tolist()


def tone(freq, fs, seconds, amplitude):
    n = np.arange(int(fs * seconds))
    return np.round(amplitude * np.sin(2 * np.pi * freq * n / fs)).tolist()


def spectrogram_reference_test(checkout):
    """tests/test_spectrogram.py's input and expected vector (dsp-reference 8 asks for them)."""
    tree = ast.parse(open(os.path.join(checkout, 'tests', 'test_spectrogram.py')).read())
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id in ('raw_data', 'expected'):
            value = node.value.args[0] if isinstance(node.value, ast.Call) else node.value
            found[node.targets[0].id] = ast.literal_eval(value)
    return found['raw_data'], found['expected']


def cases(block, checkout):
    """(name, version, input, axes, frequency, overrides); input is a list or a formula name."""
    audio = 'golden-audio'
    accel = 'golden-accelerometer'
    if block == 'raw':
        return [('golden accelerometer, defaults', 1, accel, ['x', 'y', 'z'], 62.5, {}),
                ('scaled by 2.5', 1, accel, ['x', 'y', 'z'], 62.5, {'scale-axes': 2.5})]
    if block == 'flatten':
        return [('golden accelerometer, defaults', 1, accel, ['x', 'y', 'z'], 62.5, {}),
                ('scaled by 3, only min, rms and kurtosis', 1, accel, ['x', 'y', 'z'], 62.5,
                 {'scale-axes': 3, 'average': False, 'maximum': False, 'stdev': False, 'skewness': False}),
                ('noise, two axes', 1, noise(7, 200, 50), ['a', 'b'], 100, {})]
    if block == 'image':
        rng = np.random.default_rng(3)
        pixels = rng.integers(0, 1 << 24, 4 * 3 * 2).tolist()
        return [('golden 2x1 RGB', 1, [2, 1, 0xFF8000, 0x0000FF], ['image'], 0, {'channels': 'RGB'}),
                ('golden 2x1 Grayscale', 1, [2, 1, 0xFF8000, 0x0000FF], ['image'], 0, {'channels': 'Grayscale'}),
                ('4x3, two frames, RGB', 1, [4, 3] + pixels, ['image'], 0, {'channels': 'RGB'}),
                ('4x3, two frames, Grayscale', 1, [4, 3] + pixels, ['image'], 0, {'channels': 'Grayscale'})]
    if block == 'mfe':
        out = []
        for v in (1, 2, 3, 4):
            out.append((f'v{v} golden audio, defaults', v, audio, ['audio'], 16000, {}))
            out.append((f'v{v} golden audio, 20 filters, fft 512', v, audio, ['audio'], 16000, {'num_filters': 20, 'fft_length': 512}))
            out.append((f'v{v} noise at 8 kHz, 300-3500 Hz, frame 0.025 s', v, noise(11, 8000, 3000), ['audio'], 8000,
                        {'num_filters': 16, 'fft_length': 512, 'low_frequency': 300, 'high_frequency': 3500, 'frame_length': 0.025, 'frame_stride': 0.0125, 'win_size': 31}))
            out.append((f'v{v} 11025 Hz, frame 0.02 s (220.5 samples)', v, noise(5, 5513, 2000), ['audio'], 11025,
                        {'num_filters': 10, 'fft_length': 256, 'frame_stride': 0.02}))
        out.append(('v4 loud 2 kHz tone: the top quantisation step wraps to 0', 4, tone(2000, 16000, 1, 30000), ['audio'], 16000, {}))
        out.append(('v4 noise floor -80', 4, audio, ['audio'], 16000, {'noise_floor_db': -80}))
        out.append(('v4 silence', 4, [0] * 16000, ['audio'], 16000, {}))
        return out
    if block == 'mfcc':
        out = []
        for v in (1, 2, 3, 4):
            out.append((f'v{v} golden audio, defaults', v, audio, ['audio'], 16000, {}))
            out.append((f'v{v} golden audio, no normalisation', v, audio, ['audio'], 16000, {'win_size': 0}))
            out.append((f'v{v} golden audio, 20 filters, fft 512, win 11', v, audio, ['audio'], 16000, {'num_filters': 20, 'fft_length': 512, 'win_size': 11}))
            out.append((f'v{v} noise at 8 kHz, 300-3500 Hz, pre-emphasis 0.9 shift 2', v, noise(13, 8000, 3000), ['audio'], 8000,
                        {'num_filters': 16, 'fft_length': 512, 'low_frequency': 300, 'high_frequency': 3500, 'frame_length': 0.025,
                         'frame_stride': 0.0125, 'win_size': 31, 'pre_cof': 0.9, 'pre_shift': 2, 'num_cepstral': 12}))
            out.append((f'v{v} 11025 Hz, frame 0.02 s (220.5 samples), no pre-emphasis', v, noise(17, 5513, 2000), ['audio'], 11025,
                        {'num_filters': 10, 'fft_length': 256, 'pre_cof': 0, 'win_size': 5, 'num_cepstral': 8}))
        return out
    if block == 'spectrogram':
        raw, _ = spectrogram_reference_test(checkout)
        out = []
        for v in (1, 2, 3, 4):
            out.append((f'v{v} golden audio, defaults', v, audio, ['audio'], 16000, {}))
            out.append((f'v{v} signal within [-1, 1]', v, raw, ['x'], 100, {'frame_length': 0.5, 'frame_stride': 0.25, 'fft_length': 64, 'noise_floor_db': -100}))
            out.append((f'v{v} noise at 1 kHz, fft 32', v, noise(19, 1000, 500), ['x'], 1000, {'frame_length': 0.05, 'frame_stride': 0.03, 'fft_length': 32, 'noise_floor_db': -20}))
        out.append(('v4 silence', 4, [0] * 1600, ['audio'], 16000, {}))
        return out
    raise ValueError(block)


def resolve(value):
    if value == 'golden-audio':
        return rb.golden_audio().tolist()
    if value == 'golden-accelerometer':
        return rb.golden_accelerometer().tolist()
    return value


def one_block(checkout, block, out_dir):
    module = rb.load_block(checkout, block)
    results = []
    for name, version, values, axes, frequency, overrides in cases(block, checkout):
        params = rb.python_params(checkout, block, overrides)
        case = {'name': name, 'implementationVersion': version, 'axes': axes, 'frequency': frequency, 'params': overrides}
        if isinstance(values, str):
            case['formula'] = values
        else:
            case['values'] = values
        try:
            answer = rb.run(module, version, resolve(values), axes, frequency, params)
            features = [float(x) for x in answer['features']]
            case['features'] = features
            case['outputConfig'] = answer['output_config']
            case['fftUsed'] = answer['fft_used']
            if 'labels' in answer:
                case['labels'] = answer['labels']
        except Exception as error:  # the reference raises ConfigurationError, AssertionError or Exception
            case['error'] = f'{type(error).__name__}: {error}'
        results.append(case)
    document = {'note': 'Generated by bench/dsp/generate_fixtures.py from the official edgeimpulse/processing-blocks '
                        f'generate_features (numpy {np.__version__}); do not edit by hand.',
                'block': block, 'cases': results}
    if block == 'spectrogram':
        raw, expected = spectrogram_reference_test(checkout)
        document['referenceTest'] = {'note': "tests/test_spectrogram.py of the reference: v4, fs 100, frame 0.5 s, stride 0.25 s, fft 64, noise floor -100, atol 1e-3",
                                     'values': raw, 'expected': expected}
    with open(os.path.join(out_dir, f'{block}.json'), 'w') as f:
        json.dump(document, f, separators=(',', ':'))
        f.write('\n')
    print(f'{block}: {len(results)} cases, {sum("error" in c for c in results)} refused by the reference')


if __name__ == '__main__':
    checkout = os.path.abspath(sys.argv[1])
    out_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), '..', '..', 'test', 'dsp', 'fixtures')
    if len(sys.argv) > 3:
        one_block(checkout, sys.argv[3], out_dir)
    else:
        os.makedirs(out_dir, exist_ok=True)
        for block in BLOCKS:
            subprocess.run([sys.executable, __file__, checkout, out_dir, block], check=True)
