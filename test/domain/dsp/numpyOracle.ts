// Runs a short Python script with numpy/scipy/scikit-learn as an oracle for the DSP tests. The
// interpreter is $NUMPY_PYTHON, else the venv the issue-10 notes create
// (`python3 -m venv /tmp/features-venv && /tmp/features-venv/bin/pip install numpy scipy scikit-learn`).
// Suites that need it skip, saying why, when it is absent.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const python = process.env.NUMPY_PYTHON ?? '/tmp/features-venv/bin/python';

function probe(modules: string): boolean {
  if (!existsSync(python)) return false;
  try {
    execFileSync(python, ['-c', `import ${modules}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Undefined when the oracle can run; otherwise why not (for the skipped suite's name). */
export function oracleSkipReason(modules = 'numpy'): string | undefined {
  return probe(modules) ? undefined : `skipped: no Python with ${modules} at ${python} (set NUMPY_PYTHON)`;
}

/** Runs `script` with `input` as JSON on stdin and returns what it printed, parsed as JSON. */
export function runOracle<T>(script: string, input: unknown): T {
  const out = execFileSync(python, ['-c', script], { input: JSON.stringify(input), maxBuffer: 256 * 1024 * 1024 });
  return JSON.parse(out.toString('utf8')) as T;
}

/** Runs `script` with the given arguments and returns its stdout as text. */
export function runOracleText(script: string, args: string[]): string {
  return execFileSync(python, ['-c', script, ...args], { maxBuffer: 256 * 1024 * 1024 }).toString('utf8');
}
