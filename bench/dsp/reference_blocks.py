"""Runs the official processing blocks (a checkout of edgeimpulse/processing-blocks, given by path and
never copied into this project) on inputs chosen here. Shared by generate_fixtures.py and
reference_runner.py. One block per process: every block folder brings its own `common` and speechpy
modules under the same names."""
import importlib.util
import json
import math
import os
import sys

import numpy as np


def load_block(checkout, block):
    folder = os.path.join(checkout, block)
    sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(f'ei_{block}_dsp', os.path.join(folder, 'dsp.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def default_params(checkout, block):
    """The block's parameters.json defaults, with dashes turned into underscores as the Studio does."""
    with open(os.path.join(checkout, block, 'parameters.json')) as f:
        groups = json.load(f)['parameters']
    params = {}
    for group in groups:
        for item in group.get('items', [group]):
            params[item['param'].replace('-', '_')] = item['value']
    return params


def python_params(checkout, block, overrides):
    params = default_params(checkout, block)
    for name, value in overrides.items():
        params[name.replace('-', '_')] = value
    return params


def run(module, version, values, axes, frequency, params):
    # As dsp-server.py does: np.array of the JSON numbers, so an all-integer window stays integer
    # (the image block needs integer width and height).
    return module.generate_features(version, False, np.array(values), axes, frequency, **params)


# Deterministic inputs (dsp-reference 10 where it names them).
def golden_audio():
    n = np.arange(16000)
    return np.round(12000 * np.sin(2 * np.pi * 440 * n / 16000) + 6000 * np.sin(2 * np.pi * 3000 * n / 16000))


def golden_accelerometer():
    m = np.arange(125)
    cols = [np.sin(2 * np.pi * (1 + a) * m / 62.5) + 0.5 * np.cos(2 * np.pi * 7.5 * m / 62.5) + 0.1 * a
            + 0.05 * np.sin(2 * np.pi * 23 * m / 62.5 + a) for a in range(3)]
    return np.stack(cols, axis=1).flatten()


def finite(values):
    return all(math.isfinite(v) for v in values)
