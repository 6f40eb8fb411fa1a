// Work that holds much memory while it runs (a DSP slice reads its whole sample, up to 100 MB, and
// hands it to a thread) is admitted a few at a time: the others wait their turn without holding
// anything, and past a bound of waiting callers the next is refused, so no number of requests at
// once can grow memory beyond `running` times one task's.
import { ServiceUnavailableError } from '../../domain/shared/errors';

export class Admission {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly limit: number,
    private readonly maxWaiting: number,
    private readonly what: string,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.limit) this.running++;
    else {
      if (this.waiting.length >= this.maxWaiting) {
        throw new ServiceUnavailableError(`${this.limit} ${this.what} are running and ${this.maxWaiting} more are waiting; try again in a moment`, 'BUSY');
      }
      // Resolved by a finishing caller, which hands its place on (running stays the same).
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Callers running and waiting now (for tests). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}
