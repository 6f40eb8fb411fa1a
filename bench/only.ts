// `npx tsx bench/only.ts <name>`: one benchmark alone (for profiling).
import { benchAccounts } from './accounts';
import { benchDspAudio } from './dspAudio';
import { benchDspSpectral } from './dspSpectral';
import { benchEventStoreAppend } from './eventStoreAppend';
import { benchFeatureJob } from './featureJob';
import { benchIngestion } from './ingestion';
import { benchLargeUploads } from './largeUploads';
import { benchProjectInfo } from './projectInfo';
import { benchProjectionBatch } from './projectionBatch';
const all = { accounts: benchAccounts, dspAudio: benchDspAudio, dspSpectral: benchDspSpectral, eventStoreAppend: benchEventStoreAppend, featureJob: benchFeatureJob, ingestion: benchIngestion, largeUploads: benchLargeUploads, projectInfo: benchProjectInfo, projectionBatch: benchProjectionBatch } as const;
const name = process.argv[2] as keyof typeof all;
if (!all[name]) throw new Error(`name one of: ${Object.keys(all).join(', ')}`);
const result = await all[name]();
console.log(result.name);
for (const line of result.lines) console.log(`  ${line}`);
