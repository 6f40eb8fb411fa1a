// `npm run audit -- verify`: walks the whole log (either event store; on the embedded default the
// log in DATA_DIR) and checks its hash chains and checkpoints. Exit code 0 when intact, 1 naming the
// first altered, missing or reordered event, 2 on a usage error.

import type { EventStore } from '../../stores/eventstore/eventStore';
import { progressMeter } from './progressMeter';
import { verifyLog } from './verifyLog';

const USAGE = 'usage: npm run audit -- verify';

export async function runAudit(args: readonly string[], events: EventStore, out: NodeJS.WriteStream = process.stdout): Promise<number> {
  const [command, ...rest] = args;
  if (command !== 'verify' || rest.length > 0) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
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
