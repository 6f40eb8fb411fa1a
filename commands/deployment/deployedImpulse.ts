// What a deployment artifact embeds: the impulse's runtime spec and what its hello tells of the
// project. Both the .eim (eimMain.ts) and the wasm module (wasmModule.ts) are a runtime bundle with
// `var __EDGE_ML_DEPLOYMENT__ = {...};` put before it by the build (artifactBuilders.ts).
import type { EimProject } from '../../domain/deployment/eimProtocol';
import type { ImpulseRuntimeSpec } from '../../domain/learn/impulseRuntime';

export interface DeployedImpulse {
  spec: ImpulseRuntimeSpec;
  project: EimProject;
}

/** The identifier the bundles read and the build defines. */
export const DEPLOYMENT_GLOBAL = '__EDGE_ML_DEPLOYMENT__';
