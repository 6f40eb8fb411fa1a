// From a visual layer stack and the features' size to the network's plan: the Keras layers in order,
// each with its output shape and parameter count. Pure, so a stack that cannot be built on these
// features (a reshape whose columns do not divide them, a convolution without a 2-D input) is refused
// with a 400 naming the layer before any job runs, and the pool task builds exactly this plan.
// As the real service's visual mode: ReLU after dense and convolution layers, convolutions with "same"
// padding each followed by a max pooling of 2 (stride 2, "same"), and a softmax dense layer of one
// unit per class at the end (with a flatten before it when the stack leaves more than one axis); a
// regression network ends in one linear unit instead.
import { ValidationError } from '../shared/errors';
import type { KerasMode } from './kerasRegression';
import type { KerasLayer } from './kerasSettings';

export type PlannedLayer =
  | { kind: 'dense'; units: number; activation: 'relu' | 'softmax' | 'linear' }
  | { kind: 'dropout'; rate: number }
  | { kind: 'flatten' }
  | { kind: 'reshape'; targetShape: number[] }
  | { kind: 'conv1d'; filters: number; kernelSize: number }
  | { kind: 'conv2d'; filters: number; kernelSize: number }
  | { kind: 'maxPooling1d' }
  | { kind: 'maxPooling2d' };

export interface NetworkPlan {
  inputShape: number[];
  layers: { layer: PlannedLayer; outputShape: number[]; parameters: number }[];
  parameterCount: number;
  /** Multiply-accumulates of one inference (for the on-device estimate). */
  operations: number;
}

/** Bounds the memory a training job can ask for: far above what an edge model has. */
export const MAX_PARAMETERS = 5_000_000;
const MAX_ACTIVATIONS = 10_000_000;

const size = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);
const half = (n: number) => Math.ceil(n / 2);

/** The plan of `layers` on `featureCount` flat features with `classCount` outputs (one for regression); a ValidationError naming the layer otherwise. */
export function planNetwork(layers: readonly KerasLayer[], featureCount: number, classCount: number, mode: KerasMode = 'classification'): NetworkPlan {
  if (featureCount < 1) throw new ValidationError('the features have no column: generate features first', 'NO_FEATURES');
  const plan: NetworkPlan = { inputShape: [featureCount], layers: [], parameterCount: 0, operations: 0 };
  let shape = [featureCount];
  const add = (layer: PlannedLayer, outputShape: number[], parameters: number, operations: number, field: string) => {
    if (outputShape.some((d) => !Number.isSafeInteger(d) || d < 1)) throw new ValidationError(`${field}: the layer leaves no output on ${shape.join('×')} input`, 'INVALID_LAYER_STACK');
    if (size(outputShape) > MAX_ACTIVATIONS) throw new ValidationError(`${field}: its output of ${outputShape.join('×')} values is too large (at most ${MAX_ACTIVATIONS})`, 'INVALID_LAYER_STACK');
    plan.layers.push({ layer, outputShape, parameters });
    plan.parameterCount += parameters;
    plan.operations += operations;
    if (plan.parameterCount > MAX_PARAMETERS) throw new ValidationError(`${field}: the network would have more than ${MAX_PARAMETERS} parameters`, 'INVALID_LAYER_STACK');
    shape = outputShape;
  };
  layers.forEach((l, i) => {
    const field = `visualLayers[${i}]`;
    if (l.enabled === false) return;
    switch (l.type) {
      case 'dense': {
        const units = l.neurons!;
        const inner = shape.at(-1)!;
        add({ kind: 'dense', units, activation: 'relu' }, [...shape.slice(0, -1), units], (inner + 1) * units, size(shape) * units, field);
        return;
      }
      case 'dropout':
        add({ kind: 'dropout', rate: l.dropoutRate! }, shape, 0, 0, field);
        return;
      case 'flatten':
        // Keras's Flatten needs more than one axis; on flat data it has nothing to do.
        if (shape.length > 1) add({ kind: 'flatten' }, [size(shape)], 0, 0, field);
        return;
      case 'reshape': {
        const columns = l.columns!;
        const total = size(shape);
        if (total % columns !== 0) throw new ValidationError(`${field}.columns: ${total} values cannot be laid out in rows of ${columns} columns`, 'INVALID_LAYER_STACK');
        add({ kind: 'reshape', targetShape: [total / columns, columns] }, [total / columns, columns], 0, 0, field);
        return;
      }
      case 'conv1d': {
        if (shape.length !== 2) throw new ValidationError(`${field}: a 1-D convolution needs input of two axes (steps × channels): put a reshape layer before it`, 'INVALID_LAYER_STACK');
        for (let s = 0; s < l.stack!; s++) {
          const [steps, channels] = shape as [number, number];
          add({ kind: 'conv1d', filters: l.neurons!, kernelSize: l.kernelSize! }, [steps, l.neurons!], (l.kernelSize! * channels + 1) * l.neurons!, steps * l.kernelSize! * channels * l.neurons!, field);
        }
        add({ kind: 'maxPooling1d' }, [half(shape[0]!), shape[1]!], 0, 0, field);
        return;
      }
      case 'conv2d': {
        if (shape.length === 2) add({ kind: 'reshape', targetShape: [shape[0]!, shape[1]!, 1] }, [shape[0]!, shape[1]!, 1], 0, 0, field);
        if (shape.length !== 3) throw new ValidationError(`${field}: a 2-D convolution needs input of two or three axes (rows × columns × channels): put a reshape layer before it`, 'INVALID_LAYER_STACK');
        for (let s = 0; s < l.stack!; s++) {
          const [rows, cols, channels] = shape as [number, number, number];
          const k = l.kernelSize!;
          add({ kind: 'conv2d', filters: l.neurons!, kernelSize: k }, [rows, cols, l.neurons!], (k * k * channels + 1) * l.neurons!, rows * cols * k * k * channels * l.neurons!, field);
        }
        add({ kind: 'maxPooling2d' }, [half(shape[0]!), half(shape[1]!), shape[2]!], 0, 0, field);
        return;
      }
    }
  });
  if (shape.length > 1) add({ kind: 'flatten' }, [size(shape)], 0, 0, 'the output layer');
  const [units, activation] = mode === 'regression' ? [1, 'linear' as const] : [classCount, 'softmax' as const];
  add({ kind: 'dense', units, activation }, [units], (shape[0]! + 1) * units, shape[0]! * units, 'the output layer');
  return plan;
}
