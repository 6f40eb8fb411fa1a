import { JOB_OUTPUT_BATCH_MAX_CHARS, JOB_OUTPUT_BATCH_MAX_LINES, JOB_OUTPUT_LINE_RULE } from '../../domain/job/jobDecider';
import type { JobLogLevel, JobOutputLine } from '../../domain/job/jobEvents';
import { cleanText } from '../../domain/shared/textRules';

/** Lines held while appends lag behind a runner that writes faster; beyond it lines are counted, not kept. */
const MAX_BUFFERED_LINES = 20_000;

/**
 * Collects a runner's output and hands it to `append` in batches: when `maxLines` are waiting, or
 * `flushMs` after the first waiting line. One append at a time, in order. Any text a runner writes is
 * made acceptable here (cut, refused characters replaced), so logging never fails a job.
 */
export class OutputBatcher {
  private waiting: JobOutputLine[] = [];
  private dropped = 0;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly append: (lines: JobOutputLine[]) => Promise<void>,
    private readonly options: { flushMs: number; maxLines: number; now?: () => Date },
  ) {}

  add(text: string, logLevel: JobLogLevel = 'info'): void {
    if (this.waiting.length >= MAX_BUFFERED_LINES) {
      this.dropped += 1;
      return;
    }
    const body = cleanText(text.endsWith('\n') ? text.slice(0, -1) : text, { ...JOB_OUTPUT_LINE_RULE, max: JOB_OUTPUT_LINE_RULE.max - 1 });
    this.waiting.push({ created: (this.options.now?.() ?? new Date()).toISOString(), data: `${body}\n`, logLevel });
    if (this.waiting.length >= this.options.maxLines) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.options.flushMs);
  }

  /** Appends what is waiting; resolves when it (and every earlier batch) is appended or failed. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.dropped > 0 && this.waiting.length < MAX_BUFFERED_LINES) {
      this.waiting.push({ created: new Date().toISOString(), data: `(${this.dropped} lines dropped: the job wrote faster than its output could be stored)\n`, logLevel: 'warn' });
      this.dropped = 0;
    }
    const lines = this.waiting;
    this.waiting = [];
    for (const batch of batches(lines)) this.chain = this.chain.then(() => this.append(batch));
    return this.chain;
  }
}

/** Splits lines into batches the decider accepts (bounded count and characters). */
function batches(lines: JobOutputLine[]): JobOutputLine[][] {
  const out: JobOutputLine[][] = [];
  let current: JobOutputLine[] = [];
  let chars = 0;
  for (const line of lines) {
    if (current.length >= JOB_OUTPUT_BATCH_MAX_LINES || chars + line.data.length > JOB_OUTPUT_BATCH_MAX_CHARS) {
      out.push(current);
      current = [];
      chars = 0;
    }
    current.push(line);
    chars += line.data.length;
  }
  if (current.length > 0) out.push(current);
  return out;
}
