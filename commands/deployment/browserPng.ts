// Stands in for pngjs in the wasm module (runtimeBundles.ts aliases it): pngjs needs Node's zlib,
// and a deployment never draws the DSP blocks' graphs, the one use of PNG in the DSP code.
const unavailable = (): never => {
  throw new Error('PNG graphs are not drawn in a deployment');
};

export class PNG {
  static sync = { write: unavailable };
  constructor() {
    unavailable();
  }
}
