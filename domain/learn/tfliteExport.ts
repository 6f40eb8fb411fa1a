// A trained keras model (TensorFlow.js layers format, kerasModelBlob.ts) as a float32 TensorFlow Lite
// flatbuffer, for devices and tools that take `.tflite` (the learn block's `tflite-float32` download).
// Written with the `flatbuffers` library against the TFLite schema (tensorflow/lite/schema/schema.fbs);
// the field slots and enum values below are that schema's.
//
// Layer mapping (the visual layers kerasNetwork.ts plans, channels last as Keras and TFLite both are):
//   Dense           FULLY_CONNECTED (weights transposed to [units, inputs]; keep_num_dims on >2-D input),
//                   ReLU fused, softmax as a SOFTMAX op after it
//   Conv2D          CONV_2D (kernel [kh, kw, in, out] to [out, kh, kw, in]), SAME padding, ReLU fused
//   Conv1D          RESHAPE to [1, 1, steps, channels], CONV_2D with a 1 × k kernel, RESHAPE back
//   MaxPooling1D/2D MAX_POOL_2D (2, stride 2, SAME), 1-D through the same reshapes
//   Reshape/Flatten RESHAPE;  Dropout: nothing at inference
// Float32 throughout, batch 1, as the on-device runners call it.
import { Builder } from 'flatbuffers';
import { ValidationError } from '../shared/errors';
import type { KerasModelFiles } from './kerasModelBlob';

// schema.fbs: BuiltinOperator
const OP = { CONV_2D: 3, FULLY_CONNECTED: 9, MAX_POOL_2D: 17, RESHAPE: 22, SOFTMAX: 25 } as const;
// schema.fbs: BuiltinOptions (union type index)
const OPTIONS = { Conv2DOptions: 1, Pool2DOptions: 5, FullyConnectedOptions: 8, SoftmaxOptions: 9, ReshapeOptions: 17 } as const;
const TENSOR_FLOAT32 = 0;
const TENSOR_INT32 = 2;
const PADDING_SAME = 0;
const ACTIVATION = { NONE: 0, RELU: 1 } as const;

export class TfliteExportError extends ValidationError {
  constructor(message: string) {
    super(message, 'TFLITE_EXPORT');
  }
}

interface TensorDef {
  shape: number[];
  type: number;
  /** Index into the model's buffers (0: the empty buffer, for activations). */
  buffer: number;
  name: string;
}

type Options =
  | { kind: 'fc'; activation: number; keepNumDims: boolean }
  | { kind: 'conv'; activation: number }
  | { kind: 'pool'; width: number; height: number }
  | { kind: 'reshape'; shape: number[] }
  | { kind: 'softmax' };

interface OperatorDef {
  op: number;
  inputs: number[];
  outputs: number[];
  options: Options;
}

interface LayerConfig {
  class_name: string;
  config: Record<string, unknown>;
}

/** The weights of the model, by name, as float32 arrays (the manifest's order gives their place in the file). */
function weightsByName(files: KerasModelFiles): Map<string, { shape: number[]; data: Float32Array }> {
  const out = new Map<string, { shape: number[]; data: Float32Array }>();
  let offset = 0;
  const bytes = files.weights;
  for (const group of files.modelJson.weightsManifest) {
    for (const w of group.weights as { name: string; shape: number[]; dtype: string }[]) {
      if (w.dtype !== 'float32') throw new TfliteExportError(`weight ${w.name} is ${w.dtype}: only float32 models are exported`);
      const count = w.shape.reduce((a, b) => a * b, 1);
      if (offset + 4 * count > bytes.length) throw new TfliteExportError(`the weights file is shorter than its manifest (${w.name})`);
      const data = new Float32Array(count);
      new Uint8Array(data.buffer).set(bytes.subarray(offset, offset + 4 * count));
      out.set(w.name, { shape: w.shape, data });
      offset += 4 * count;
    }
  }
  return out;
}

const size = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

/** Reorders a row-major array of `shape` by `axes` (the new order of the old axes). */
function transpose(data: Float32Array, shape: number[], axes: number[]): Float32Array {
  const newShape = axes.map((a) => shape[a]!);
  const strides = shape.map((_, i) => size(shape.slice(i + 1)));
  const out = new Float32Array(data.length);
  const index = new Array<number>(newShape.length).fill(0);
  for (let o = 0; o < out.length; o++) {
    let from = 0;
    for (let d = 0; d < axes.length; d++) from += index[d]! * strides[axes[d]!]!;
    out[o] = data[from]!;
    for (let d = newShape.length - 1; d >= 0; d--) {
      if (++index[d]! < newShape[d]!) break;
      index[d] = 0;
    }
  }
  return out;
}

/** The graph of the model: tensors, constant buffers and operators, before serialisation. */
function buildGraph(files: KerasModelFiles): { tensors: TensorDef[]; buffers: Uint8Array[]; operators: OperatorDef[]; input: number; output: number } {
  const topology = files.modelJson.modelTopology as { class_name?: string; config?: { layers?: LayerConfig[] } } | undefined;
  const layers = topology?.config?.layers;
  if (topology?.class_name !== 'Sequential' || !Array.isArray(layers) || layers.length === 0) throw new TfliteExportError('only Sequential models with layers are exported');
  const weights = weightsByName(files);
  const tensors: TensorDef[] = [];
  const buffers: Uint8Array[] = [new Uint8Array()];
  const operators: OperatorDef[] = [];
  const activation = (shape: number[], name: string) => tensors.push({ shape, type: TENSOR_FLOAT32, buffer: 0, name }) - 1;
  const constant = (shape: number[], type: number, data: Float32Array | Int32Array, name: string) => {
    buffers.push(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    return tensors.push({ shape, type, buffer: buffers.length - 1, name }) - 1;
  };
  const weight = (name: string) => {
    const w = weights.get(name);
    if (!w) throw new TfliteExportError(`the model has no weight ${name}`);
    return w;
  };
  const reshape = (from: number, shape: number[], name: string) => {
    const to = activation(shape, name);
    const shapeTensor = constant([shape.length], TENSOR_INT32, Int32Array.from(shape), `${name}/shape`);
    operators.push({ op: OP.RESHAPE, inputs: [from, shapeTensor], outputs: [to], options: { kind: 'reshape', shape } });
    return to;
  };
  const fused = (name: string, a: unknown) => {
    if (a === 'relu') return ACTIVATION.RELU;
    if (a === 'linear' || a === undefined || a === null) return ACTIVATION.NONE;
    throw new TfliteExportError(`layer ${name}: activation ${String(a)} is not exported`);
  };

  const first = layers[0]!.config;
  const batchShape = first.batch_input_shape as (number | null)[] | undefined;
  if (!Array.isArray(batchShape) || batchShape.length < 2) throw new TfliteExportError('the first layer has no input shape');
  let shape = [1, ...(batchShape.slice(1) as number[])];
  const input = activation(shape, 'input');
  let x = input;

  for (const layer of layers) {
    const c = layer.config;
    const name = String(c.name);
    switch (layer.class_name) {
      case 'Dropout':
        break;
      case 'Reshape':
        shape = [1, ...(c.target_shape as number[])];
        x = reshape(x, shape, name);
        break;
      case 'Flatten':
        shape = [1, size(shape)];
        x = reshape(x, shape, name);
        break;
      case 'Dense': {
        const kernel = weight(`${name}/kernel`);
        const bias = weight(`${name}/bias`);
        const [inputs, units] = kernel.shape as [number, number];
        const w = constant([units, inputs], TENSOR_FLOAT32, transpose(kernel.data, kernel.shape, [1, 0]), `${name}/kernel`);
        const b = constant([units], TENSOR_FLOAT32, bias.data, `${name}/bias`);
        const softmax = c.activation === 'softmax';
        const outShape = [...shape.slice(0, -1), units];
        const y = activation(outShape, softmax ? `${name}/logits` : name);
        operators.push({ op: OP.FULLY_CONNECTED, inputs: [x, w, b], outputs: [y], options: { kind: 'fc', activation: softmax ? ACTIVATION.NONE : fused(name, c.activation), keepNumDims: shape.length > 2 } });
        shape = outShape;
        x = y;
        if (softmax) {
          const s = activation(shape, name);
          operators.push({ op: OP.SOFTMAX, inputs: [x], outputs: [s], options: { kind: 'softmax' } });
          x = s;
        }
        break;
      }
      case 'Conv1D':
      case 'Conv2D': {
        const oneD = layer.class_name === 'Conv1D';
        if (c.padding !== 'same' || (c.strides as number[]).some((s) => s !== 1) || (c.dilation_rate as number[]).some((d) => d !== 1)) {
          throw new TfliteExportError(`layer ${name}: only stride 1, dilation 1, "same" padding convolutions are exported`);
        }
        const kernel = weight(`${name}/kernel`);
        const bias = weight(`${name}/bias`);
        // Keras [kh, kw, in, out] (1-D: [k, in, out], a 1 × k kernel): TFLite [out, kh, kw, in].
        const kShape = oneD ? [1, ...kernel.shape] : kernel.shape;
        const out = kShape[3]!;
        const w = constant([out, kShape[0]!, kShape[1]!, kShape[2]!], TENSOR_FLOAT32, transpose(kernel.data, kShape, [3, 0, 1, 2]), `${name}/kernel`);
        const b = constant([out], TENSOR_FLOAT32, bias.data, `${name}/bias`);
        const in4 = oneD ? [1, 1, shape[1]!, shape[2]!] : shape;
        if (oneD) x = reshape(x, in4, `${name}/as2d`);
        const out4 = [1, in4[1]!, in4[2]!, out];
        const y = activation(out4, oneD ? `${name}/2d` : name);
        operators.push({ op: OP.CONV_2D, inputs: [x, w, b], outputs: [y], options: { kind: 'conv', activation: fused(name, c.activation) } });
        x = y;
        shape = oneD ? [1, out4[2]!, out] : out4;
        if (oneD) x = reshape(x, shape, name);
        break;
      }
      case 'MaxPooling1D':
      case 'MaxPooling2D': {
        const oneD = layer.class_name === 'MaxPooling1D';
        const pool = c.pool_size as number[];
        const strides = c.strides as number[];
        if (c.padding !== 'same' || pool.some((p, i) => p !== strides[i])) throw new TfliteExportError(`layer ${name}: only "same" pooling with stride equal to the pool is exported`);
        const [ph, pw] = oneD ? [1, pool[0]!] : [pool[0]!, pool[1]!];
        const in4 = oneD ? [1, 1, shape[1]!, shape[2]!] : shape;
        if (oneD) x = reshape(x, in4, `${name}/as2d`);
        const out4 = [1, Math.ceil(in4[1]! / ph), Math.ceil(in4[2]! / pw), in4[3]!];
        const y = activation(out4, oneD ? `${name}/2d` : name);
        operators.push({ op: OP.MAX_POOL_2D, inputs: [x], outputs: [y], options: { kind: 'pool', width: pw, height: ph } });
        x = y;
        shape = oneD ? [1, out4[2]!, out4[3]!] : out4;
        if (oneD) x = reshape(x, shape, name);
        break;
      }
      default:
        throw new TfliteExportError(`layer ${name}: ${layer.class_name} layers are not exported`);
    }
  }
  return { tensors, buffers, operators, input, output: x };
}

function intVector(b: Builder, values: readonly number[]): number {
  b.startVector(4, values.length, 4);
  for (let i = values.length - 1; i >= 0; i--) b.addInt32(values[i]!);
  return b.endVector();
}

function offsetVector(b: Builder, offsets: readonly number[]): number {
  b.startVector(4, offsets.length, 4);
  for (let i = offsets.length - 1; i >= 0; i--) b.addOffset(offsets[i]!);
  return b.endVector();
}

function writeOptions(b: Builder, o: Options): { type: number; offset: number } {
  switch (o.kind) {
    case 'fc':
      b.startObject(4);
      b.addFieldInt8(0, o.activation, 0);
      b.addFieldInt8(2, o.keepNumDims ? 1 : 0, 0);
      return { type: OPTIONS.FullyConnectedOptions, offset: b.endObject() };
    case 'conv':
      b.startObject(6);
      b.addFieldInt8(0, PADDING_SAME, -1);
      b.addFieldInt32(1, 1, 0);
      b.addFieldInt32(2, 1, 0);
      b.addFieldInt8(3, o.activation, 0);
      b.addFieldInt32(4, 1, 0);
      b.addFieldInt32(5, 1, 0);
      return { type: OPTIONS.Conv2DOptions, offset: b.endObject() };
    case 'pool':
      b.startObject(6);
      b.addFieldInt8(0, PADDING_SAME, -1);
      b.addFieldInt32(1, o.width, 0);
      b.addFieldInt32(2, o.height, 0);
      b.addFieldInt32(3, o.width, 0);
      b.addFieldInt32(4, o.height, 0);
      b.addFieldInt8(5, ACTIVATION.NONE, -1);
      return { type: OPTIONS.Pool2DOptions, offset: b.endObject() };
    case 'reshape': {
      const shape = intVector(b, o.shape);
      b.startObject(1);
      b.addFieldOffset(0, shape, 0);
      return { type: OPTIONS.ReshapeOptions, offset: b.endObject() };
    }
    case 'softmax':
      b.startObject(1);
      b.addFieldFloat32(0, 1, 0);
      return { type: OPTIONS.SoftmaxOptions, offset: b.endObject() };
  }
}

/** The `.tflite` bytes of a packed keras model's files; a TfliteExportError names what cannot be exported. */
export function kerasModelToTflite(files: KerasModelFiles, description = 'Exported by the edge ML service'): Uint8Array {
  const graph = buildGraph(files);
  const b = new Builder(1024 + graph.buffers.reduce((a, x) => a + x.length, 0));

  const bufferOffsets = graph.buffers.map((data) => {
    let vector = 0;
    if (data.length > 0) {
      // Constant data 16-byte aligned, as the TFLite converter writes it (SIMD kernels read it in place).
      b.startVector(1, data.length, 16);
      for (let i = data.length - 1; i >= 0; i--) b.addInt8(data[i]!);
      vector = b.endVector();
    }
    b.startObject(3);
    if (data.length > 0) b.addFieldOffset(0, vector, 0);
    return b.endObject();
  });

  const tensorOffsets = graph.tensors.map((t) => {
    const name = b.createString(t.name);
    const shape = intVector(b, t.shape);
    b.startObject(8);
    b.addFieldOffset(0, shape, 0);
    b.addFieldInt8(1, t.type, -1);
    b.addFieldInt32(2, t.buffer, -1);
    b.addFieldOffset(3, name, 0);
    return b.endObject();
  });

  const codes = [...new Set(graph.operators.map((o) => o.op))];
  const codeOffsets = codes.map((code) => {
    b.startObject(4);
    b.addFieldInt8(0, code, -1);
    b.addFieldInt32(2, 1, 0);
    b.addFieldInt32(3, code, -1);
    return b.endObject();
  });

  const operatorOffsets = graph.operators.map((o) => {
    const inputs = intVector(b, o.inputs);
    const outputs = intVector(b, o.outputs);
    const options = writeOptions(b, o.options);
    b.startObject(5);
    b.addFieldInt32(0, codes.indexOf(o.op), -1);
    b.addFieldOffset(1, inputs, 0);
    b.addFieldOffset(2, outputs, 0);
    b.addFieldInt8(3, options.type, -1);
    b.addFieldOffset(4, options.offset, 0);
    return b.endObject();
  });

  const subgraphName = b.createString('main');
  const tensorsVector = offsetVector(b, tensorOffsets);
  const inputs = intVector(b, [graph.input]);
  const outputs = intVector(b, [graph.output]);
  const operatorsVector = offsetVector(b, operatorOffsets);
  b.startObject(5);
  b.addFieldOffset(0, tensorsVector, 0);
  b.addFieldOffset(1, inputs, 0);
  b.addFieldOffset(2, outputs, 0);
  b.addFieldOffset(3, operatorsVector, 0);
  b.addFieldOffset(4, subgraphName, 0);
  const subgraph = b.endObject();

  const codesVector = offsetVector(b, codeOffsets);
  const subgraphsVector = offsetVector(b, [subgraph]);
  const descriptionOffset = b.createString(description);
  const buffersVector = offsetVector(b, bufferOffsets);
  b.startObject(5);
  b.addFieldInt32(0, 3, -1);
  b.addFieldOffset(1, codesVector, 0);
  b.addFieldOffset(2, subgraphsVector, 0);
  b.addFieldOffset(3, descriptionOffset, 0);
  b.addFieldOffset(4, buffersVector, 0);
  b.finish(b.endObject(), 'TFL3');
  return b.asUint8Array().slice();
}
