import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * A task for the pool: a function exported by a module, given a structured-clonable input. The
 * module is loaded in the worker thread (TypeScript modules through tsx when the service runs from
 * source), so a runner names the module holding its CPU-bound code (`serviceModule`) rather than
 * sending code.
 */
export interface PoolTask {
  /** `import.meta.url`-style file URL (or absolute path) of the module. */
  module: string | URL;
  /** Name of the exported function; it may be async. */
  name: string;
  input?: unknown;
  /** Buffers of the input moved to the thread rather than copied: unusable here once the task is sent. */
  transfer?: ArrayBuffer[];
}

/** The task was stopped by its AbortSignal: its thread was terminated. */
export class TaskAbortedError extends Error {
  constructor() {
    super('The task was aborted');
    this.name = 'TaskAbortedError';
  }
}

/** The task's function threw in its thread; `message` is its message. */
export class TaskFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TaskFailedError';
  }
}

interface Pending {
  task: { id: number; module: string; name: string; input: unknown };
  transfer: ArrayBuffer[];
  resolve(value: unknown): void;
  reject(error: unknown): void;
  signal: AbortSignal | undefined;
  onAbort?: () => void;
}

interface Slot {
  worker: Worker;
  current: Pending | undefined;
}

// Under tsx and vitest this file is TypeScript source, and so are the modules beside it. Compiled
// (service/build.ts), it is bundled into `main.js` at the root of the build's output, with the pool's
// modules built beside it as entry points of their own, at their source paths.
const COMPILED = !import.meta.url.endsWith('.ts');
const SERVICE_ROOT = new URL(COMPILED ? './' : '../../', import.meta.url);

/**
 * The URL of one of the service's own modules for a pool task, by its path from the service's root
 * without extension (`commands/dsp/dspPoolTasks`): the source under tsx and vitest, the compiled
 * module when the service runs compiled. service/build.ts must list it among its entry points.
 */
export function serviceModule(pathFromRoot: string): URL {
  return new URL(`${pathFromRoot}.${COMPILED ? 'js' : 'ts'}`, SERVICE_ROOT);
}

/**
 * A new thread running one of the service's own modules (`serviceModule`'s path), given `workerData`.
 * Compiled, that is plain JavaScript. From source, the thread registers tsx's loader, then imports
 * the module (a `--import` in the thread's execArgv registers the hooks too late for the thread's own
 * entry). service/build.ts must list the module among its entry points.
 */
export function startServiceThread(pathFromRoot: string, workerData?: unknown): Worker {
  const body = serviceModule(pathFromRoot);
  if (COMPILED) return new Worker(body, { workerData });
  const bootstrap = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})
  .then((tsx) => { tsx.register(); return import(${JSON.stringify(body.href)}); })
  .catch((error) => { console.error(error); process.exit(1); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}

/** A new thread running threadPoolWorker. */
const startThread = (): Worker => startServiceThread('commands/jobs/threadPoolWorker');

/**
 * Worker threads for CPU-bound job work, sized to the cores, so the HTTP event loop never runs it.
 * Threads start when work arrives and stay for the next task; tasks beyond the size wait in order.
 * A task's AbortSignal terminates its thread at once (a busy loop cannot check a signal), and a
 * fresh thread takes its place for the next task.
 */
export class ThreadPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;

  constructor(readonly size: number = availableParallelism()) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`A thread pool needs at least one thread, got ${size}`);
  }

  run<T = unknown>(task: PoolTask, options: { signal?: AbortSignal } = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error('The thread pool is closed'));
    if (options.signal?.aborted) return Promise.reject(new TaskAbortedError());
    return new Promise<T>((resolve, reject) => {
      const module = task.module instanceof URL ? task.module.href : task.module.startsWith('file:') ? task.module : new URL(`file://${task.module}`).href;
      const pending: Pending = { task: { id: this.nextId++, module, name: task.name, input: task.input }, transfer: task.transfer ?? [], resolve: resolve as (v: unknown) => void, reject, signal: options.signal };
      if (options.signal) {
        pending.onAbort = () => this.abort(pending);
        options.signal.addEventListener('abort', pending.onAbort, { once: true });
      }
      this.queue.push(pending);
      this.dispatch();
    });
  }

  /** Threads running now (for tests and health): at most `size`. */
  get threads(): number {
    return this.slots.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) this.settle(p, () => p.reject(new Error('The thread pool was closed')));
    await Promise.all(this.slots.splice(0).map(async (slot) => {
      if (slot.current) this.settle(slot.current, () => slot.current!.reject(new Error('The thread pool was closed')));
      await slot.worker.terminate();
    }));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => s.current === undefined);
      if (!slot) {
        if (this.slots.length >= this.size) return;
        slot = this.spawn();
      }
      const next = this.queue.shift()!;
      slot.current = next;
      slot.worker.postMessage(next.task, next.transfer);
    }
  }

  private spawn(): Slot {
    const worker = startThread();
    worker.unref();
    const slot: Slot = { worker, current: undefined };
    worker.on('message', (message: { id: number; result?: unknown; error?: string }) => {
      const p = slot.current;
      if (!p || p.task.id !== message.id) return;
      slot.current = undefined;
      this.settle(p, () => (message.error !== undefined ? p.reject(new TaskFailedError(message.error)) : p.resolve(message.result)));
      this.dispatch();
    });
    // A thread that dies (out of memory, a crash in native code) fails its task; the next task gets a new thread.
    const lost = (error: Error) => {
      this.remove(slot);
      const p = slot.current;
      slot.current = undefined;
      if (p) this.settle(p, () => p.reject(error));
      if (!this.closed) this.dispatch();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`The worker thread stopped (exit code ${code})`)));
    this.slots.push(slot);
    return slot;
  }

  private abort(p: Pending): void {
    const queued = this.queue.indexOf(p);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      this.settle(p, () => p.reject(new TaskAbortedError()));
      return;
    }
    const slot = this.slots.find((s) => s.current === p);
    if (!slot) return;
    slot.current = undefined;
    this.remove(slot);
    this.settle(p, () => p.reject(new TaskAbortedError()));
    void slot.worker.terminate();
    this.dispatch();
  }

  private remove(slot: Slot): void {
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
  }

  private settle(p: Pending, how: () => void): void {
    if (p.onAbort) p.signal?.removeEventListener('abort', p.onAbort);
    how();
  }
}
