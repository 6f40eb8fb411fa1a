// The .eim program: `node model.eim <socket path>`, as the Linux runner starts it. Runs the
// embedded impulse on TensorFlow.js's cpu backend and serves the runner's protocol on the socket
// until SIGINT or SIGTERM (the runner stops it with SIGINT), removing the socket file on the way out.
import { rmSync } from 'node:fs';
import { createImpulseRunner } from '../../domain/learn/impulseRuntime';
import { cpuTensorflow } from './cpuTensorflow';
import type { DeployedImpulse } from './deployedImpulse';
import { serveEim } from './eimServer';

declare const __EDGE_ML_DEPLOYMENT__: DeployedImpulse;

async function main(): Promise<void> {
  const socketPath = process.argv[2];
  if (!socketPath) {
    console.error(`Usage: ${process.argv[1] ?? 'model.eim'} <socket path>\nServes the impulse "${__EDGE_ML_DEPLOYMENT__.project.name}" to the Edge Impulse Linux runner on a Unix socket.`);
    process.exit(2);
  }
  const { spec, project } = __EDGE_ML_DEPLOYMENT__;
  const runner = await createImpulseRunner(spec, await cpuTensorflow());
  const server = await serveEim(socketPath, spec, runner, project);
  const stop = () => {
    server.close();
    rmSync(socketPath, { force: true });
    runner.dispose();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.on('SIGHUP', stop);
}

main().catch((error: unknown) => {
  console.error(`Failed to start the impulse: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
