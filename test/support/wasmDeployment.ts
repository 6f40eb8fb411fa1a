// The wasm deployment as a user gets it: built through the official SDK, downloaded, unzipped, and its
// module run on windows in a bare Node process of its own (outside this repository, so no
// node_modules is reachable: the module must be whole).
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { EdgeImpulseApi } from 'edge-impulse-api';

export interface WasmAnswer {
  classification: Record<string, number>;
  anomaly?: number;
}

/** Builds the wasm deployment (following the job with `runJob`), downloads and unzips it into `dir`; answers the zip and the folder. */
export async function buildWasmDeployment(api: EdgeImpulseApi, projectId: number, dir: string, runJob: (jobId: number) => Promise<unknown>): Promise<{ zip: string; out: string }> {
  const build = await api.jobs.buildOnDeviceModelJob(projectId, { engine: 'tflite' }, { type: 'wasm' });
  await runJob(build.id);
  const zip = path.join(dir, 'wasm.zip');
  await writeFile(zip, await api.deployment.downloadBuild(projectId, { type: 'wasm' }));
  const out = path.join(dir, 'wasm');
  execFileSync('unzip', ['-q', zip, '-d', out]);
  return { zip, out };
}

/** The module's modelParameters and its answer for each window, from a Node process of its own. */
export function runWasmModule(out: string, windows: readonly number[][]): { modelParameters: Record<string, unknown>; results: WasmAnswer[] } {
  const script = `import { classify, modelParameters } from ${JSON.stringify(path.join(out, 'impulse.mjs'))};
    const results = [];
    for (const w of JSON.parse(process.argv[1])) results.push(await classify(w));
    console.log(JSON.stringify({ modelParameters, results }));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(windows)], { cwd: out }).toString()) as { modelParameters: Record<string, unknown>; results: WasmAnswer[] };
}
