import { describe, expect, it } from 'vitest';
import { processingBlocks } from '../../../domain/dsp/blocks';
import { DSP_BLOCKS } from '../../../domain/impulse/blockCatalog';

describe('the processing block registry', () => {
  it('runs every DSP block of the catalog, at the catalog’s latest implementation version', () => {
    for (const definition of DSP_BLOCKS) {
      const block = processingBlocks.get(definition.info.type);
      expect(block, definition.info.type).toBeDefined();
      expect(block!.implementationVersions).toContain(definition.info.latestImplementationVersion);
    }
  });

  it('agrees with the catalog on which blocks can compute feature importance', () => {
    for (const definition of DSP_BLOCKS) {
      expect(processingBlocks.get(definition.info.type)!.hasFeatureImportance, definition.info.type).toBe(definition.canCalculateFeatureImportance);
    }
  });
});
