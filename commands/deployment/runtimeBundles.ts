// The runtime bundles the deployments are made of: the .eim's Node program and the wasm target's
// ES module, each the impulse runtime, TensorFlow.js (core, layers, cpu backend) and the protocol
// code in one file, with the impulse left out (each build puts it before the bundle). The compiled
// service ships them prebuilt (service/build.ts writes deployment-runtime/ beside main.js: the
// production image has no esbuild); from sources they are built with esbuild on first use and kept
// for the process's life.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';

export type RuntimeBundleKind = 'eim' | 'wasm';

interface BundleRecipe {
  entry: string;
  platform: 'node' | 'browser';
  format: 'cjs' | 'esm';
  asset: string;
}

export const RUNTIME_BUNDLES: Readonly<Record<RuntimeBundleKind, BundleRecipe>> = {
  eim: { entry: 'commands/deployment/eimMain.ts', platform: 'node', format: 'cjs', asset: 'deployment-runtime/eim-runtime.cjs' },
  wasm: { entry: 'commands/deployment/wasmModule.ts', platform: 'browser', format: 'esm', asset: 'deployment-runtime/wasm-runtime.mjs' },
};

// As threadPool.ts: under tsx and vitest this file is source; compiled, it is part of main.js at the output's root.
const COMPILED = !import.meta.url.endsWith('.ts');
const SERVICE_ROOT = new URL(COMPILED ? './' : '../../', import.meta.url);

/** Builds a bundle from the sources under `root` (service/build.ts, and a service run from sources). */
export async function buildRuntimeBundle(kind: RuntimeBundleKind, root: string = fileURLToPath(SERVICE_ROOT)): Promise<string> {
  const recipe = RUNTIME_BUNDLES[kind];
  // Named through a variable: the compiled service reads the prebuilt assets and must not import
  // esbuild (a development dependency), which a literal import() would make it do.
  const esbuild: string = 'esbuild';
  const { build } = (await import(esbuild)) as typeof import('esbuild');
  const result = await build({
    absWorkingDir: root,
    entryPoints: [recipe.entry],
    bundle: true,
    platform: recipe.platform,
    format: recipe.format,
    target: recipe.platform === 'node' ? 'node18' : 'es2020',
    // The packages' ES modules: they declare their side effects (the cpu backend's kernel registration).
    mainFields: ['module', 'main'],
    ...(recipe.platform === 'browser' ? { plugins: [browserStandIns(root)] } : {}),
    minify: true,
    legalComments: 'none',
    write: false,
    logLevel: 'warning',
  });
  return result.outputFiles[0]!.text;
}

/**
 * The browser module's stand-ins for what only Node has: pngjs (needs zlib; draws DSP graphs, never
 * in a deployment) and util (TensorFlow.js's Node platform; its package maps it away for browsers).
 */
function browserStandIns(root: string): Plugin {
  const standIns: Record<string, string> = { pngjs: 'commands/deployment/browserPng.ts', util: 'commands/deployment/browserUtil.ts' };
  return {
    name: 'browser-stand-ins',
    setup(build) {
      build.onResolve({ filter: /^(pngjs|util)$/ }, (args) => ({ path: path.join(root, standIns[args.path]!) }));
    },
  };
}

const cache = new Map<RuntimeBundleKind, Promise<string>>();

/** The bundle's text: the prebuilt asset when compiled, else built once from the sources. */
export function runtimeBundle(kind: RuntimeBundleKind): Promise<string> {
  let bundle = cache.get(kind);
  if (!bundle) {
    bundle = COMPILED ? readFile(new URL(RUNTIME_BUNDLES[kind].asset, SERVICE_ROOT), 'utf8') : buildRuntimeBundle(kind);
    // A failed build is tried again next time rather than kept.
    bundle.catch(() => cache.delete(kind));
    cache.set(kind, bundle);
  }
  return bundle;
}
