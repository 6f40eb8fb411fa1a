// `npx tsx bench/only.ts <name>`: one benchmark alone (for profiling).
import { benchAccounts } from './accounts';
import { benchDspAudio } from './dspAudio';
import { benchDspSpectral } from './dspSpectral';
import { benchEventStoreAppend } from './eventStoreAppend';
import { benchFeatureJob } from './featureJob';
import { benchIngestion, smallSamples, splittable } from './ingestion';
import { benchIngestionStages } from './ingestionStages';
import { benchStores } from './benchKit';
import { benchLargeUploads } from './largeUploads';
import { benchOauthBearer } from './oauthBearer';
import { benchProjectInfo } from './projectInfo';
import { benchProjectionBatch } from './projectionBatch';
import { benchReadStores } from './readStores';
import { benchAuditLog } from './auditLog';
import { benchRestart } from './restart';
const all = { accounts: benchAccounts, dspAudio: benchDspAudio, dspSpectral: benchDspSpectral, eventStoreAppend: benchEventStoreAppend, featureJob: benchFeatureJob, ingestion: benchIngestion, ingestionStages: benchIngestionStages,
  // Figure 1 of ingestion alone, on each store, for profiling the /data path (BENCH_LAYOUT=one or apart: one layout only).
  ingestionData: async () => {
    const lines: string[] = [];
    for (const store of benchStores()) {
      if (process.env.BENCH_LAYOUT !== 'apart') lines.push(...(await smallSamples(store)));
      if (process.env.BENCH_LAYOUT !== 'one' && splittable(store)) lines.push(...(await smallSamples(store, 'ingestion apart')));
    }
    return { name: 'ingestion: /data only', lines };
  },
  largeUploads: benchLargeUploads, oauthBearer: benchOauthBearer, projectInfo: benchProjectInfo, readStores: benchReadStores, restart: benchRestart, auditLog: benchAuditLog, projectionBatch: benchProjectionBatch } as const;
const name = process.argv[2] as keyof typeof all;
if (!all[name]) throw new Error(`name one of: ${Object.keys(all).join(', ')}`);
const result = await all[name]();
console.log(result.name);
for (const line of result.lines) console.log(`  ${line}`);
