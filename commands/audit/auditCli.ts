// `npm run audit -- verify` walks the whole log (either event store; on the embedded default the
// log in DATA_DIR) and checks its hash chains and checkpoints: exit code 0 when intact, 1 naming the
// first altered, missing or reordered event. `npm run audit -- export --out FILE [--project ID]`
// writes the log, or one project's history, as NDJSON. Exit code 2 on a usage error.

import { parseArgs } from 'node:util';
import type { SealingEventStore } from '../../stores/keystore/sealingEventStore';
import { exportLog } from './exportLog';
import { progressMeter } from './progressMeter';
import { verifyLog } from './verifyLog';

const USAGE = 'usage: npm run audit -- verify\n       npm run audit -- export --out FILE [--project ID]';

class UsageError extends Error {}

export async function runAudit(args: readonly string[], events: SealingEventStore, out: NodeJS.WritableStream = process.stdout): Promise<number> {
  try {
    const [command, ...rest] = args;
    if (command === 'verify' && rest.length === 0) return await verify(events, out);
    if (command === 'export') return await runExport(events, rest, out);
    throw new UsageError(command === undefined ? 'no command' : `unknown command or arguments: ${args.join(' ')}`);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    return 2;
  }
}

async function verify(events: SealingEventStore, out: NodeJS.WritableStream): Promise<number> {
  const head = await events.headPosition();
  const meter = progressMeter('verifying the log');
  const report = await verifyLog(events, (done, position) => meter.update(done, head ? Number(position) / Number(head) : undefined));
  meter.finish(report.events);
  if (report.problem) {
    const p = report.problem;
    out.write(`log NOT intact: ${p.kind} at stream ${p.streamId} revision ${p.revision} position ${p.position}: ${p.detail}\n`);
    return 1;
  }
  out.write(
    `log intact: ${report.events} events in ${report.streams} streams, ${report.checkpointsMatched} checkpoints matched; ` +
      `log hash ${report.logHash} through position ${report.lastPosition ?? 'none'} (keep it elsewhere to detect a rewrite)\n`,
  );
  return 0;
}

async function runExport(events: SealingEventStore, args: readonly string[], out: NodeJS.WritableStream): Promise<number> {
  let values: { out?: string; project?: string };
  try {
    ({ values } = parseArgs({ args: [...args], options: { out: { type: 'string' }, project: { type: 'string' } }, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (!values.out) throw new UsageError('export needs --out FILE');
  if (values.project !== undefined && !/^[1-9]\d{0,14}$/.test(values.project)) throw new UsageError(`--project must be a project id, got "${values.project}"`);
  const projectId = values.project === undefined ? undefined : Number(values.project);
  const result = await exportLog(events, { out: values.out, projectId }, progressMeter(projectId === undefined ? 'exporting the log' : `exporting project ${projectId}`));
  out.write(`${result.written} events written to ${values.out} (${result.read} read)\n`);
  return 0;
}
