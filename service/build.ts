// The production build: the service as plain JavaScript that `node dist/main.js` runs, without tsx.
// `npm run build` writes it to dist/ (or `tsx service/build.ts <folder>`).
// Packages stay external: node_modules is used as installed (native addons such as better-sqlite3
// and sharp cannot be bundled), so the output needs a node_modules beside or above it.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { buildRuntimeBundle, RUNTIME_BUNDLES, type RuntimeBundleKind } from '../commands/deployment/runtimeBundles';

const SERVICE_ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * The entry points, at their source paths: the service, and every module the thread pool loads in
 * its threads by path (`serviceModule` in commands/jobs/threadPool.ts), since a thread imports a file.
 */
export const ENTRY_POINTS = ['main.ts', 'commands/jobs/threadPoolWorker.ts', 'commands/dsp/dspPoolTasks.ts', 'commands/training/anomalyPoolTasks.ts', 'commands/training/kerasPoolTasks.ts', 'commands/classify/classifyPoolTasks.ts', 'service/rebuildPart.ts'];

// threadPool.ts finds the pool's modules from where it is bundled, which must be main.js at the root.
const THREAD_POOL = 'commands/jobs/threadPool.ts';

export interface ServiceBuild {
  /** The packages the output imports from node_modules (names, not files), sorted. */
  packages: string[];
}

/** Builds the service into `outDir` (emptied first): `main.js` and the pool's modules, with source maps. */
export async function buildService(outDir: string): Promise<ServiceBuild> {
  await rm(outDir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: SERVICE_ROOT,
    entryPoints: ENTRY_POINTS,
    outbase: '.',
    outdir: outDir,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    sourcesContent: false,
    metafile: true,
    logLevel: 'warning',
  });
  const holders = Object.entries(result.metafile.outputs)
    .filter(([, output]) => THREAD_POOL in output.inputs)
    .map(([file]) => path.relative(outDir, path.resolve(SERVICE_ROOT, file)));
  if (holders.length !== 1 || holders[0] !== 'main.js') {
    throw new Error(`${THREAD_POOL} must be bundled into main.js only (it finds the pool's modules from there), found in: ${holders.join(', ')}`);
  }
  // The output is ES modules with .js names: it says so itself, wherever it is copied.
  await mkdir(outDir, { recursive: true });
  await writeFile(path.join(outDir, 'package.json'), `${JSON.stringify({ type: 'module' }, null, 2)}\n`);
  // The deployments' runtime bundles, prebuilt: the compiled service has no esbuild (commands/deployment/runtimeBundles.ts).
  for (const [kind, recipe] of Object.entries(RUNTIME_BUNDLES) as [RuntimeBundleKind, (typeof RUNTIME_BUNDLES)[RuntimeBundleKind]][]) {
    await mkdir(path.dirname(path.join(outDir, recipe.asset)), { recursive: true });
    await writeFile(path.join(outDir, recipe.asset), await buildRuntimeBundle(kind, SERVICE_ROOT));
  }
  const imported = Object.values(result.metafile.outputs).flatMap((output) => output.imports.filter((i) => i.external).map((i) => i.path));
  const packages = new Set(imported.filter((p) => !p.startsWith('node:')).map((p) => p.split('/').slice(0, p.startsWith('@') ? 2 : 1).join('/')));
  return { packages: [...packages].sort() };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const outDir = path.resolve(process.argv[2] ?? path.join(SERVICE_ROOT, 'dist'));
  buildService(outDir).then(
    () => console.log(`built ${ENTRY_POINTS.length} entry points into ${outDir}`),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
