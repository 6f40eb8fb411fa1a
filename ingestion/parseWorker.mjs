// Worker entry for large sample files (see sampleParser.ts). Plain JavaScript so that a worker
// starts the same way under `tsx`, vitest or plain node; tsx's scoped import loads the TypeScript.
import { tsImport } from 'tsx/esm/api';

await tsImport('./parseWorkerMain.ts', import.meta.url);
