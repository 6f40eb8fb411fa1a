// A trained keras model as one blob: the TensorFlow.js layers format's two files packed together.
//   bytes 0..3   uint32 little-endian: N, the byte length of model.json
//   bytes 4..4+N model.json (UTF-8): { modelTopology, format: 'layers-model', generatedBy, convertedBy,
//                weightsManifest: [{ paths: ['model.weights.bin'], weights: [...] }] }
//   the rest     model.weights.bin: the weights as weightsManifest lists them (float32 little-endian)
// Splitting it at N gives the two files `tf.loadLayersModel` reads from a folder or a server.

export const WEIGHTS_FILE = 'model.weights.bin';

export interface KerasModelFiles {
  /** The parsed model.json. */
  modelJson: { modelTopology: unknown; weightsManifest: { paths: string[]; weights: unknown[] }[]; format?: string; generatedBy?: string; convertedBy?: string | null };
  weights: Uint8Array;
}

export function packKerasModel(files: KerasModelFiles): Uint8Array {
  const json = Buffer.from(JSON.stringify(files.modelJson), 'utf8');
  const out = new Uint8Array(4 + json.length + files.weights.length);
  new DataView(out.buffer).setUint32(0, json.length, true);
  out.set(json, 4);
  out.set(files.weights, 4 + json.length);
  return out;
}

export function unpackKerasModel(blob: Uint8Array): KerasModelFiles {
  if (blob.length < 4) throw new Error('A keras model blob holds at least its 4-byte header');
  const length = new DataView(blob.buffer, blob.byteOffset, blob.byteLength).getUint32(0, true);
  if (4 + length > blob.length) throw new Error(`The keras model blob is cut short: model.json of ${length} bytes announced`);
  const modelJson = JSON.parse(Buffer.from(blob.buffer, blob.byteOffset + 4, length).toString('utf8')) as KerasModelFiles['modelJson'];
  return { modelJson, weights: blob.slice(4 + length) };
}
