// `npm run bench`: runs every benchmark in turn (never in parallel: they compete for the disk)
// and prints what each measured.

import type { BenchResult } from './benchResult';
import { benchAccounts } from './accounts';
import { benchDspAudio } from './dspAudio';
import { benchDspSpectral } from './dspSpectral';
import { benchEventStoreAppend } from './eventStoreAppend';
import { benchFeatureJob } from './featureJob';
import { benchIngestion } from './ingestion';
import { benchLargeUploads } from './largeUploads';
import { benchProjectInfo } from './projectInfo';
import { benchProjectionBatch } from './projectionBatch';

const benchmarks: Array<() => Promise<BenchResult>> = [benchEventStoreAppend, benchAccounts, benchProjectInfo, benchIngestion, benchLargeUploads, benchDspSpectral, benchDspAudio, benchFeatureJob, benchProjectionBatch];

for (const bench of benchmarks) {
  const result = await bench();
  console.log(result.name);
  for (const line of result.lines) console.log(`  ${line}`);
}
