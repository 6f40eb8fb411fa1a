"""Times one official block on windows sent as JSON on stdin, for bench/dspAudio.ts.

Usage: <venv python> bench/dsp/reference_runner.py <processing-blocks checkout> <block>
stdin: {"version", "params", "axes", "frequency", "windows": [[...], ...], "minSeconds"}
stdout: {"windowsPerSecond", "features": [[...] per window, from the first pass]}
Loading the block (numpy, scipy, matplotlib) happens before the clock starts."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_blocks as rb  # noqa: E402


def main():
    checkout, block = os.path.abspath(sys.argv[1]), sys.argv[2]
    job = json.load(sys.stdin)
    module = rb.load_block(checkout, block)
    params = rb.python_params(checkout, block, job['params'])
    windows = job['windows']
    features = [[float(x) for x in rb.run(module, job['version'], w, job['axes'], job['frequency'], params)['features']] for w in windows]
    done = 0
    start = time.perf_counter()
    while True:
        for w in windows:
            rb.run(module, job['version'], w, job['axes'], job['frequency'], params)
        done += len(windows)
        elapsed = time.perf_counter() - start
        if elapsed >= job['minSeconds']:
            break
    json.dump({'windowsPerSecond': done / elapsed, 'features': features}, sys.stdout)


if __name__ == '__main__':
    main()
