// raw (dsp-reference 2): the window as received, interleaved, times `scale-axes`.
import type { ProcessingBlock } from './processingBlock';
import { checkInterleaved, checkVersion, numberParam } from './speech/blockParams';

export const rawBlock: ProcessingBlock = {
  type: 'raw',
  implementationVersions: [1],
  dimensionalityReduction: true,
  hasFeatureImportance: true,
  canNormalizeData: true,
  run(input, params, { implementationVersion }) {
    checkVersion('raw', this.implementationVersions, implementationVersion);
    checkInterleaved('raw', input);
    const scale = numberParam(params, 'scale-axes', 1);
    const features = new Float64Array(input.values.length);
    for (let i = 0; i < features.length; i++) features[i] = scale === 1 ? input.values[i]! : input.values[i]! * scale;
    return { features, labels: [], outputConfig: { type: 'flat', shape: { width: features.length } }, fftUsed: [], graphs: [] };
  },
};
