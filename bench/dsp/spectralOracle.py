"""Runs the reference spectral-analysis block on cases read from stdin and prints its answers.

Usage: python spectralOracle.py <processing-blocks checkout> < cases.json > answers.json

cases.json: {"cases": [{"name", "values", "axes", "frequency", "version", "params"}], "repeat": n}
Parameters use the parameters.json names (dashes); they are passed as the Studio passes them
(dashes become underscores). Each answer is {name, features, labels, output_config, fft_used} or
{name, error}. With "repeat" > 0 it also times `repeat` passes over all cases and reports
windows per second (used by bench/dspSpectral.ts).
This script only calls the reference; it contains none of its code.
"""
import json
import math
import sys
import time

import numpy as np

checkout = sys.argv[1]
sys.path.insert(0, checkout + '/spectral_analysis')
import dsp  # noqa: E402  (the reference block, from the checkout)

request = json.load(sys.stdin)


def call(case):
    params = {k.replace('-', '_'): v for k, v in case['params'].items()}
    return dsp.generate_features(case['version'], False, np.array(case['values'], dtype=float), case['axes'],
                                 case['frequency'], **params)


answers = []
for case in request['cases']:
    try:
        out = call(case)
        answers.append({'name': case['name'], 'features': out['features'], 'labels': out['labels'],
                        'output_config': out['output_config'], 'fft_used': out['fft_used']})
    except Exception as e:  # the reference raises ConfigurationError, ValueError or Exception
        answers.append({'name': case['name'], 'error': f'{type(e).__name__}: {e}'})

result = {'answers': answers}
repeat = int(request.get('repeat', 0))
if repeat > 0:
    ok = [c for c, a in zip(request['cases'], answers) if 'error' not in a]
    start = time.perf_counter()
    for _ in range(repeat):
        for case in ok:
            call(case)
    seconds = time.perf_counter() - start
    result['windowsPerSecond'] = repeat * len(ok) / seconds
json.dump(result, sys.stdout)
