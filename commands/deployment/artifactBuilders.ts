// The artifacts: a runtime bundle (runtimeBundles.ts) with the impulse put before it.
// * runner-linux-x86_64: the .eim, a Node script (`#!/usr/bin/env node`; Node 18 or later on the
//   device) that the Linux runner starts with a socket path.
// * wasm: a zip of impulse.mjs (the ES module, for Node and browsers), a README and an example.
import type { DeployedImpulse } from './deployedImpulse';
import { DEPLOYMENT_GLOBAL } from './deployedImpulse';
import type { ArtifactBuilder } from './buildDeployment';
import type { RuntimeBundleKind } from './runtimeBundles';
import { wasmExample, wasmReadme } from './wasmReadme';
import { zipArchive } from './zipArchive';

type Bundles = (kind: RuntimeBundleKind) => Promise<string>;

/** The impulse as the bundles read it. JSON is valid JavaScript (ES2019: U+2028 and U+2029 included). */
const prelude = (deployment: DeployedImpulse): string => `var ${DEPLOYMENT_GLOBAL} = ${JSON.stringify(deployment)};\n`;

export function artifactBuilders(bundles: Bundles): Record<string, ArtifactBuilder> {
  return {
    async 'runner-linux-x86_64'({ spec, project }) {
      const script = `#!/usr/bin/env node\n${prelude({ spec: spec as DeployedImpulse['spec'], project })}${await bundles('eim')}`;
      return new TextEncoder().encode(script);
    },
    async wasm({ spec, project }) {
      const deployment = { spec: spec as DeployedImpulse['spec'], project };
      return await zipArchive([
        { name: 'impulse.mjs', data: `${prelude(deployment)}${await bundles('wasm')}` },
        { name: 'README.md', data: wasmReadme(deployment) },
        { name: 'example.mjs', data: wasmExample(deployment) },
      ]);
    },
  };
}
