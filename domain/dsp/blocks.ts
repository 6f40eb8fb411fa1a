// The processing blocks by catalog type. spectral-analysis is added by the lead on merge (it lives on
// another branch), so it is not imported here.
import { flattenBlock } from './flatten';
import { imageBlock } from './image';
import { mfccBlock } from './mfcc';
import { mfeBlock } from './mfe';
import type { ProcessingBlock } from './processingBlock';
import { rawBlock } from './raw';
import { spectrogramBlock } from './spectrogram';

export const processingBlocks: ReadonlyMap<string, ProcessingBlock> = new Map(
  [rawBlock, flattenBlock, imageBlock, mfeBlock, mfccBlock, spectrogramBlock].map((b) => [b.type, b]),
);
