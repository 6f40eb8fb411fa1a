// The processing blocks by catalog type: what the generate-features job and the DSP run endpoints call.
import { flattenBlock } from './flatten';
import { imageBlock } from './image';
import { mfccBlock } from './mfcc';
import { mfeBlock } from './mfe';
import type { ProcessingBlock } from './processingBlock';
import { rawBlock } from './raw';
import { spectralAnalysisBlock } from './spectralAnalysis';
import { spectrogramBlock } from './spectrogram';

export const processingBlocks: ReadonlyMap<string, ProcessingBlock> = new Map(
  [rawBlock, flattenBlock, imageBlock, spectralAnalysisBlock, mfeBlock, mfccBlock, spectrogramBlock].map((b) => [b.type, b]),
);
