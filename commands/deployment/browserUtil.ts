// Stands in for Node's `util` in the wasm module (runtimeBundles.ts maps it here). TensorFlow.js's
// Node platform asks `util` for text coding and typed-array checks; its package maps `util` away
// for browsers, which would leave the module broken in Node. These answer alike in both.
export const TextEncoder = globalThis.TextEncoder;
export const TextDecoder = globalThis.TextDecoder;
export const types = {
  isFloat32Array: (a: unknown): boolean => a instanceof Float32Array,
  isInt32Array: (a: unknown): boolean => a instanceof Int32Array,
  isUint8Array: (a: unknown): boolean => a instanceof Uint8Array,
  isUint8ClampedArray: (a: unknown): boolean => a instanceof Uint8ClampedArray,
};
