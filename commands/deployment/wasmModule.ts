// The `wasm` deployment's module: an ES module that runs the embedded impulse in Node and in a
// browser, TensorFlow.js's cpu backend bundled inside (plain JavaScript: no .wasm file to serve).
//   import { classify, modelParameters } from './impulse.mjs';
//   const { classification, anomaly } = await classify(rawWindow);
import { eimModelParameters } from '../../domain/deployment/eimProtocol';
import { createImpulseRunner, kerasLabels, rawValueCountOf, type ImpulseClassification, type ImpulseRunner } from '../../domain/learn/impulseRuntime';
import { cpuTensorflow } from './cpuTensorflow';
import type { DeployedImpulse } from './deployedImpulse';

declare const __EDGE_ML_DEPLOYMENT__: DeployedImpulse;

const { spec, project: deployed } = __EDGE_ML_DEPLOYMENT__;
let runner: Promise<ImpulseRunner> | undefined;

/** The project, as the .eim's hello names it. */
export const project = { id: deployed.id, name: deployed.name, deployVersion: deployed.deployVersion };

const firstKerasLabels = (s: typeof spec): string[] => {
  const keras = s.learnBlocks.find((b) => b.type === 'keras');
  return keras?.type === 'keras' ? kerasLabels(keras) : [];
};

/** The impulse's parameters, as the Linux runner's hello gives them (input_features_count: values of one raw window). */
export const modelParameters = eimModelParameters(spec, { rawValueCount: rawValueCountOf(spec), labels: firstKerasLabels(spec) });

/** Loads the model (once; classify does it when needed). */
export function init(): Promise<void> {
  runner ??= cpuTensorflow().then((tf) => createImpulseRunner(spec, tf));
  return runner.then(() => undefined);
}

/**
 * Classifies one raw window (`modelParameters.input_features_count` values: time series
 * interleaved by sample, or image pixels as 0xRRGGBB): the first classifier's scores by label, the
 * anomaly score when the impulse has an anomaly block, every learn block's result and the time spent.
 */
export async function classify(raw: ArrayLike<number>): Promise<ImpulseClassification> {
  await init();
  return (await runner!).classify(raw);
}
