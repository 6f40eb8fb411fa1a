// The body of a ThreadPool thread: runs the named export of a module for each task it is sent.
import { parentPort } from 'node:worker_threads';

interface Task {
  id: number;
  module: string;
  name: string;
  input: unknown;
}

parentPort!.on('message', (task: Task) => {
  void (async () => {
    try {
      const mod = (await import(task.module)) as Record<string, unknown>;
      const fn = mod[task.name];
      if (typeof fn !== 'function') throw new Error(`${task.module} exports no function "${task.name}"`);
      const result: unknown = await (fn as (input: unknown) => unknown)(task.input);
      parentPort!.postMessage({ id: task.id, result });
    } catch (error) {
      parentPort!.postMessage({ id: task.id, error: error instanceof Error ? error.message : String(error) });
    }
  })();
});
