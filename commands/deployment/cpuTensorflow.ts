// TensorFlow.js as the deployments bundle it: the core, the layers API and the cpu backend only
// (the parts of @tensorflow/tfjs the impulse runtime uses; no WebGL, no wasm files to ship beside).
// Registers the backend and its kernels (the bundles resolve its ES module, which declares this side effect).
import '@tensorflow/tfjs-backend-cpu';
import * as core from '@tensorflow/tfjs-core';
import * as layers from '@tensorflow/tfjs-layers';
import type * as TF from '@tensorflow/tfjs';

/** The cpu backend chosen and ready, in production mode (no debug checks, no banner). */
export async function cpuTensorflow(): Promise<typeof TF> {
  core.enableProdMode();
  await core.setBackend('cpu');
  await core.ready();
  return { ...core, ...layers } as unknown as typeof TF;
}
