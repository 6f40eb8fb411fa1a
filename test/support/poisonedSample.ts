import type { SampleIngested } from '../../domain/sample/sampleEvents';

/**
 * A sample whose length overflowed to Infinity (logged as null): the deciders refuse it now, but an
 * older log or a future bug could hold it, and the samples projection cannot pass it.
 */
export function poisonedSample(projectId: number, sampleId: number): SampleIngested['data'] {
  return {
    sampleId, projectId, category: 'training', fileName: 'overflow.json', label: 'x', sha256: '0'.repeat(64), size: 10,
    contentType: 'application/json', kind: 'time-series', intervalMs: null as never, frequency: 0, sensors: [{ name: 'x', units: 'u' }],
    valuesCount: 2, totalLengthMs: null as never, deviceName: null, deviceType: null, width: null, height: null, signatureMethod: 'none',
    signatureValidate: false, signatureKeyId: null, metadata: {}, boundingBoxes: [], structuredLabels: [], uploadSource: null, ingested: new Date().toISOString(),
  };
}
