// Where an anomaly learn block sits in a project's impulses, and how its feature vector is made:
// its DSP blocks' features side by side, in the order the block lists them, so an axis index is a
// column of that concatenation.
import type { LearnBlock } from '../impulse/impulseEvents';

export interface ImpulseWithLearnBlocks {
  id: number;
  learnBlocks: LearnBlock[];
}

/** The live impulse and block of the K-means anomaly block `learnId` (learn block ids are unique within a project); undefined when there is none. */
export function findAnomalyBlock<I extends ImpulseWithLearnBlocks>(impulses: readonly I[], learnId: number): { impulse: I; block: LearnBlock } | undefined {
  for (const impulse of impulses) {
    const block = impulse.learnBlocks.find((b) => b.id === learnId);
    if (block) return block.type === 'anomaly' ? { impulse, block } : undefined;
  }
  return undefined;
}

/** Axis `axis` of the concatenated vector as (DSP block position, column), or undefined when beyond it. */
export function locateAxis(featureCounts: readonly number[], axis: number): { part: number; column: number } | undefined {
  let offset = 0;
  for (let part = 0; part < featureCounts.length; part++) {
    if (axis < offset + featureCounts[part]!) return { part, column: axis - offset };
    offset += featureCounts[part]!;
  }
  return undefined;
}
