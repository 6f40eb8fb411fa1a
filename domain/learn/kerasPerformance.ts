// The on-device estimate of a trained keras model (KerasModelMetadataMetrics.onDevicePerformance):
// not measured on a device, but computed from the network's plan. Latency is its multiply-accumulates
// over a device's float32 rate; the model's size is its float32 weights plus a fixed overhead per
// layer; the arena is the largest input and output of one layer held together; the TensorFlow Lite
// and EON figures add each runtime's own code and RAM. Rough by design: it ranks stacks and targets.
import type { KerasModelTrained } from './kerasEvents';
import { planNetwork } from './kerasNetwork';

interface Device {
  mcu: string;
  name: string;
  /** Float32 multiply-accumulates per millisecond with the reference kernels. */
  macsPerMs: number;
}

const DEVICES: Record<string, Device> = {
  'cortex-m4f-80mhz': { mcu: 'cortex-m4f-80mhz', name: 'Cortex-M4F 80MHz', macsPerMs: 20_000 },
  'cortex-m7-216mhz': { mcu: 'cortex-m7-216mhz', name: 'Cortex-M7 216MHz', macsPerMs: 108_000 },
  'raspberry-pi-4': { mcu: 'raspberry-pi-4', name: 'Raspberry Pi 4', macsPerMs: 1_000_000 },
};
export const DEFAULT_LATENCY_DEVICE = 'cortex-m4f-80mhz';
/** The devices latency, RAM and ROM are estimated for (a tuner's target device is one of them). */
export const LATENCY_DEVICES: readonly string[] = Object.keys(DEVICES);

const PER_LAYER_BYTES = 512;
const TFLITE = { rom: 30_000, ram: 4_000 };
const EON = { rom: 10_000, ram: 1_000 };

export function kerasPerformance(model: Pick<KerasModelTrained['data'], 'settings' | 'inputShape' | 'classes' | 'mode'>, latencyDevice: string | undefined) {
  const device = DEVICES[latencyDevice ?? ''] ?? DEVICES[DEFAULT_LATENCY_DEVICE]!;
  const plan = planNetwork(model.settings.visualLayers, model.inputShape.reduce((a, b) => a * b, 1), model.classes.length, model.mode === 'regression' ? 'regression' : 'classification');
  const modelSize = plan.parameterCount * 4 + PER_LAYER_BYTES * plan.layers.length;
  let previous = plan.inputShape.reduce((a, b) => a * b, 1);
  let arenaSize = 0;
  for (const l of plan.layers) {
    const out = l.outputShape.reduce((a, b) => a * b, 1);
    arenaSize = Math.max(arenaSize, (previous + out) * 4);
    previous = out;
  }
  const figures = (runtime: { rom: number; ram: number }) => ({ ramRequired: arenaSize + runtime.ram, romRequired: modelSize + runtime.rom, arenaSize, modelSize });
  return [
    {
      mcu: device.mcu,
      name: device.name,
      isDefault: true,
      latency: Math.max(1, Math.ceil(plan.operations / device.macsPerMs)),
      tflite: figures(TFLITE),
      eon: figures(EON),
      hasPerformance: true,
    },
  ];
}
