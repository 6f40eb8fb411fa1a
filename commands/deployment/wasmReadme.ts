// The README and example that go in the wasm zip beside impulse.mjs.
import type { DeployedImpulse } from './deployedImpulse';

export function wasmReadme({ spec, project }: DeployedImpulse): string {
  const input = spec.inputBlock.type === 'image' ? `an image of ${spec.inputBlock.imageWidth}x${spec.inputBlock.imageHeight} pixels, each a number 0xRRGGBB` : `${spec.windowRows} samples of ${spec.axes.join(', ')} at ${spec.frequencyHz} Hz, interleaved by sample (${spec.axes.join(', ')}, ${spec.axes.join(', ')}, ...)`;
  return `# ${project.name} (deployment version ${project.deployVersion})

\`impulse.mjs\` runs this impulse (its DSP blocks and trained models are inside) on one window of raw
data. It is a self-contained ES module: TensorFlow.js with its cpu backend is bundled in (plain
JavaScript, no .wasm file and no other download), so it runs as it is in Node.js 18 or later and in
any current browser.

One raw window is ${input}.

## Node.js

    node example.mjs

## Browser

Serve this folder and import the module:

    <script type="module">
      import { classify, modelParameters } from './impulse.mjs';
      const window = new Array(modelParameters.input_features_count).fill(0);
      console.log(await classify(window));
    </script>

## API

- \`modelParameters\`: the impulse's parameters as the Linux runner names them
  (\`input_features_count\`, \`labels\`, \`frequency\`, \`axis_count\`, \`has_anomaly\`, ...).
- \`init()\`: loads the model ahead of the first classification.
- \`classify(raw)\`: resolves with \`{ classification, anomaly?, results, timing }\`: the scores by
  label, the anomaly score when the impulse has an anomaly block, every learn block's result, and
  the milliseconds spent in the DSP blocks, the classifiers and the anomaly blocks.
`;
}

export function wasmExample({ project }: DeployedImpulse): string {
  return `// Classifies a window of zeros with ${JSON.stringify(project.name)}: run \`node example.mjs\`.
import { classify, modelParameters } from './impulse.mjs';

const window = new Array(modelParameters.input_features_count).fill(0);
const result = await classify(window);
console.log(JSON.stringify({ labels: modelParameters.labels, ...result }, null, 2));
`;
}
