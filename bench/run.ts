// `npm run bench`: runs every benchmark in turn (never in parallel: they compete for the disk)
// and prints what each measured. `npm run bench -- --only restart,ingestion` runs the named ones.

import type { BenchResult } from './benchResult';
import { benchAccounts } from './accounts';
import { benchDspAudio } from './dspAudio';
import { benchDspSpectral } from './dspSpectral';
import { benchEventStoreAppend } from './eventStoreAppend';
import { benchFeatureJob } from './featureJob';
import { benchIngestion } from './ingestion';
import { benchIngestionStages } from './ingestionStages';
import { benchKerasTraining } from './kerasTraining';
import { benchClassification } from './classification';
import { benchLargeUploads } from './largeUploads';
import { benchOauthBearer } from './oauthBearer';
import { benchProjectInfo } from './projectInfo';
import { benchProjectionBatch } from './projectionBatch';
import { benchReadStores } from './readStores';
import { benchAuditLog } from './auditLog';
import { benchRemoteDevices } from './remoteDevices';
import { benchRestart } from './restart';
import { benchTunerRun } from './tunerRun';

const benchmarks: Record<string, () => Promise<BenchResult>> = {
  eventStoreAppend: benchEventStoreAppend,
  accounts: benchAccounts,
  projectInfo: benchProjectInfo,
  oauthBearer: benchOauthBearer,
  readStores: benchReadStores,
  ingestion: benchIngestion,
  ingestionStages: benchIngestionStages,
  largeUploads: benchLargeUploads,
  dspSpectral: benchDspSpectral,
  dspAudio: benchDspAudio,
  featureJob: benchFeatureJob,
  kerasTraining: benchKerasTraining,
  classification: benchClassification,
  remoteDevices: benchRemoteDevices,
  restart: benchRestart,
  auditLog: benchAuditLog,
  projectionBatch: benchProjectionBatch,
  tunerRun: benchTunerRun,
};

const at = process.argv.indexOf('--only');
const only = at < 0 ? Object.keys(benchmarks) : (process.argv[at + 1] ?? '').split(',').filter(Boolean);
const unknown = only.filter((name) => !(name in benchmarks));
if (only.length === 0 || unknown.length > 0) throw new Error(`--only takes names among: ${Object.keys(benchmarks).join(', ')}${unknown.length ? ` (not: ${unknown.join(', ')})` : ''}`);

for (const bench of only.map((name) => benchmarks[name]!)) {
  const result = await bench();
  console.log(result.name);
  for (const line of result.lines) console.log(`  ${line}`);
}
