"""Times one official block on windows sent as JSON, for bench/dspAudio.ts, in rounds the caller
interleaves with its own so both sides share the machine's load alike.

Usage: <venv python> bench/dsp/reference_runner.py <processing-blocks checkout> <block>
stdin, one JSON per line: first {"version", "params", "axes", "frequency", "windows": [[...], ...]},
answered with {"features": [[...] per window]}; then {"round": seconds} any number of times, each
answered with {"windows": n, "seconds": s} after running the windows over and over for that long.
Loading the block (numpy, scipy, matplotlib) happens before any round."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_blocks as rb  # noqa: E402


def answer(value):
    sys.stdout.write(json.dumps(value) + '\n')
    sys.stdout.flush()


def main():
    checkout, block = os.path.abspath(sys.argv[1]), sys.argv[2]
    module = rb.load_block(checkout, block)
    job = json.loads(sys.stdin.readline())
    params = rb.python_params(checkout, block, job['params'])
    windows = job['windows']

    def run(w):
        return rb.run(module, job['version'], w, job['axes'], job['frequency'], params)

    answer({'features': [[float(x) for x in run(w)['features']] for w in windows]})
    for line in sys.stdin:
        seconds = json.loads(line)['round']
        done = 0
        start = time.perf_counter()
        while True:
            for w in windows:
                run(w)
            done += len(windows)
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                break
        answer({'windows': done, 'seconds': elapsed})


if __name__ == '__main__':
    main()
