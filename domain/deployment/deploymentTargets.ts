// The deployment targets this service offers (the SDK's DeploymentTarget): what a trained impulse
// can be exported as. `format` is the target's identifier (what white labels enable); the engine
// lists follow the SDK's DeploymentTargetEngine values.

export const DEPLOYMENT_ENGINES = ['tflite', 'tflite-eon', 'tflite-eon-ram-optimized', 'tensorrt', 'akida', 'drp-ai', 'tidl', 'ethos-linux'] as const;
export type DeploymentEngine = (typeof DEPLOYMENT_ENGINES)[number];
export type DeploymentUiSection = 'library' | 'firmware' | 'mobile' | 'hidden';

export interface DeploymentTarget {
  name: string;
  description: string;
  image: string;
  imageClasses: string;
  format: string;
  latencyDevice?: string;
  hasEonCompiler: boolean;
  hasTensorRT: boolean;
  hasTensaiFlow: boolean;
  hasDRPAI: boolean;
  hasTIDL: boolean;
  hasAkida: boolean;
  hasMemryx: boolean;
  hasStAton: boolean;
  hasCevaNpn: boolean;
  hasNordicAxon: boolean;
  hasQaic: boolean;
  hideOptimizations: boolean;
  uiSection: DeploymentUiSection;
  supportedEngines: DeploymentEngine[];
  preferredEngine: DeploymentEngine;
  docsUrl: string;
  firmwareRepoUrl?: string;
  modelVariants: { variant: 'int8' | 'float32' | 'akida'; supported: boolean; hint?: string }[];
  /** DSPGroupItem[]: build options shown for the target. */
  parameters: Record<string, unknown>[];
}

const MCU: DeploymentEngine[] = ['tflite-eon', 'tflite-eon-ram-optimized', 'tflite'];
const DOCS = 'https://docs.edgeimpulse.com/docs';

interface Entry {
  format: string;
  name: string;
  description: string;
  uiSection: DeploymentUiSection;
  engines: DeploymentEngine[];
  latencyDevice?: string;
  docs: string;
  firmwareRepoUrl?: string;
  /** float32 only (accelerators that take no int8 model here). */
  float32Only?: boolean;
  parameters?: Record<string, unknown>[];
}

const textParameter = (name: string, param: string, defaultValue: string, help: string): Record<string, unknown> => ({
  name,
  value: defaultValue,
  defaultValue,
  type: 'text',
  help,
  param,
  readonly: false,
  shouldShow: true,
  required: false,
  showClickToSet: false,
});

const ENTRIES: readonly Entry[] = [
  // Libraries: source to build into your own firmware or application.
  { format: 'zip', name: 'C++ library', description: 'A portable C++ library with no external dependencies, for any microcontroller or processor with a C++ compiler.', uiSection: 'library', engines: MCU, docs: `${DOCS}/run-inference/cpp-library` },
  {
    format: 'arduino',
    name: 'Arduino library',
    description: 'An Arduino library with examples, for any Arduino-compatible board with enough memory.',
    uiSection: 'library',
    engines: MCU,
    latencyDevice: 'cortex-m4f-80mhz',
    docs: `${DOCS}/run-inference/arduino-library`,
    parameters: [textParameter('Library name', 'arduinoLibraryName', '', 'The name of the generated Arduino library (the project name when empty)')],
  },
  { format: 'cubemx', name: 'Cube.MX CMSIS-PACK', description: 'A CMSIS-PACK to import into STM32CubeMX for STM32 microcontrollers.', uiSection: 'library', engines: MCU, latencyDevice: 'cortex-m7-216mhz', docs: `${DOCS}/run-inference/cubeai` },
  { format: 'wasm', name: 'WebAssembly', description: 'A WebAssembly package for Node.js and other WebAssembly runtimes.', uiSection: 'library', engines: ['tflite'], docs: `${DOCS}/run-inference/webassembly` },
  { format: 'wasm-browser-simd', name: 'WebAssembly (browser, SIMD)', description: 'A WebAssembly package with SIMD instructions for current web browsers.', uiSection: 'library', engines: ['tflite'], docs: `${DOCS}/run-inference/webassembly` },
  { format: 'tensorrt', name: 'TensorRT library', description: 'A C++ library using NVIDIA TensorRT on Jetson devices.', uiSection: 'library', engines: ['tensorrt'], latencyDevice: 'jetson-nano', docs: `${DOCS}/run-inference/cpp-library`, float32Only: true },
  { format: 'ethos-u', name: 'Ethos-U library', description: 'A C++ library with the model compiled for Arm Ethos-U55 and U65 NPUs.', uiSection: 'library', engines: ['tflite'], latencyDevice: 'cortex-m55-ethos-u55', docs: `${DOCS}/run-inference/cpp-library` },
  { format: 'openmv', name: 'OpenMV library', description: 'A model and labels file for OpenMV cameras running MicroPython.', uiSection: 'library', engines: ['tflite'], latencyDevice: 'cortex-m7-480mhz', docs: `${DOCS}/run-inference/running-your-impulse-openmv` },
  { format: 'docker', name: 'Docker container', description: 'A container image that serves the impulse over HTTP, for x86 and ARM hosts.', uiSection: 'library', engines: ['tflite'], docs: `${DOCS}/run-inference/docker` },
  { format: 'tflite', name: 'TensorFlow Lite (model only)', description: 'The trained model as a TensorFlow Lite file, without the signal processing.', uiSection: 'library', engines: ['tflite'], docs: `${DOCS}/run-inference/cpp-library` },
  // Linux boards: ready-to-run .eim executables for the Linux runner.
  { format: 'runner-linux-aarch64', name: 'Linux (AARCH64)', description: 'An .eim executable for 64-bit ARM Linux boards (Raspberry Pi 4 and 5, and others).', uiSection: 'firmware', engines: ['tflite'], latencyDevice: 'rpi4', docs: `${DOCS}/run-inference/linux-eim-executables` },
  { format: 'runner-linux-armv7', name: 'Linux (ARMv7)', description: 'An .eim executable for 32-bit ARM Linux boards.', uiSection: 'firmware', engines: ['tflite'], latencyDevice: 'rpi4', docs: `${DOCS}/run-inference/linux-eim-executables` },
  { format: 'runner-linux-x86_64', name: 'Linux (x86)', description: 'An .eim executable for x86_64 Linux computers.', uiSection: 'firmware', engines: ['tflite'], docs: `${DOCS}/run-inference/linux-eim-executables` },
  { format: 'runner-mac-arm64', name: 'macOS (ARM64)', description: 'An .eim executable for Apple silicon Macs.', uiSection: 'firmware', engines: ['tflite'], docs: `${DOCS}/run-inference/linux-eim-executables` },
  { format: 'runner-linux-aarch64-jetson-nano', name: 'NVIDIA Jetson Nano', description: 'An .eim executable using the GPU of NVIDIA Jetson Nano boards through TensorRT.', uiSection: 'firmware', engines: ['tensorrt'], latencyDevice: 'jetson-nano', docs: `${DOCS}/run-inference/linux-eim-executables`, float32Only: true },
  // Development boards: firmware to flash.
  { format: 'arduino-nano-33-ble-sense', name: 'Arduino Nano 33 BLE Sense', description: 'Firmware for the Arduino Nano 33 BLE Sense that runs the impulse on its sensors.', uiSection: 'firmware', engines: MCU, latencyDevice: 'cortex-m4f-64mhz', docs: `${DOCS}/run-inference/arduino-library`, firmwareRepoUrl: 'https://github.com/edgeimpulse/firmware-arduino-nano-33-ble-sense' },
  { format: 'espressif-esp32', name: 'Espressif ESP-EYE (ESP32)', description: 'Firmware for ESP32 boards such as the ESP-EYE.', uiSection: 'firmware', engines: MCU, latencyDevice: 'esp32-240mhz', docs: `${DOCS}/run-inference/cpp-library`, firmwareRepoUrl: 'https://github.com/edgeimpulse/firmware-espressif-esp32' },
  { format: 'nordic-nrf52840-dk', name: 'Nordic nRF52840 DK', description: 'Firmware for the Nordic nRF52840 development kit.', uiSection: 'firmware', engines: MCU, latencyDevice: 'cortex-m4f-64mhz', docs: `${DOCS}/run-inference/cpp-library`, firmwareRepoUrl: 'https://github.com/edgeimpulse/firmware-nordic-nrf52840dk-nrf5340dk' },
  { format: 'raspberry-pi-rp2040', name: 'Raspberry Pi RP2040', description: 'Firmware for the Raspberry Pi Pico and other RP2040 boards.', uiSection: 'firmware', engines: MCU, latencyDevice: 'cortex-m0plus-133mhz', docs: `${DOCS}/run-inference/cpp-library`, firmwareRepoUrl: 'https://github.com/edgeimpulse/firmware-pi-rp2040' },
  { format: 'sony-spresense', name: 'Sony Spresense', description: 'Firmware for the Sony Spresense main board.', uiSection: 'firmware', engines: MCU, latencyDevice: 'cortex-m4f-156mhz', docs: `${DOCS}/run-inference/cpp-library`, firmwareRepoUrl: 'https://github.com/edgeimpulse/firmware-sony-spresense' },
  { format: 'disco-l475vg', name: 'ST B-L475E-IOT01A', description: 'Firmware for the ST IoT Discovery Kit.', uiSection: 'firmware', engines: MCU, latencyDevice: 'cortex-m4f-80mhz', docs: `${DOCS}/run-inference/cpp-library`, firmwareRepoUrl: 'https://github.com/edgeimpulse/firmware-st-b-l475e-iot01a' },
  { format: 'brainchip-akida', name: 'BrainChip Akida', description: 'A model for BrainChip Akida neuromorphic processors (AKD1000).', uiSection: 'firmware', engines: ['akida'], latencyDevice: 'akd1000', docs: `${DOCS}/run-inference/linux-eim-executables` },
  // Mobile: runs in a phone's browser, no install.
  { format: 'mobile-phone', name: 'Mobile phone', description: "Runs the impulse in the phone's web browser with WebAssembly, using its camera, microphone or accelerometer.", uiSection: 'mobile', engines: ['tflite'], docs: `${DOCS}/edge-ai-hardware/using-your-mobile-phone` },
  { format: 'computer', name: 'Computer', description: "Runs the impulse in the computer's web browser with WebAssembly, using its camera or microphone.", uiSection: 'mobile', engines: ['tflite'], docs: `${DOCS}/edge-ai-hardware/using-your-computer` },
];

function target(e: Entry): DeploymentTarget {
  const has = (engine: DeploymentEngine) => e.engines.includes(engine);
  return {
    name: e.name,
    description: e.description,
    // No images are served by this service: clients show the name.
    image: '',
    imageClasses: '',
    format: e.format,
    ...(e.latencyDevice ? { latencyDevice: e.latencyDevice } : {}),
    hasEonCompiler: has('tflite-eon'),
    hasTensorRT: has('tensorrt'),
    hasTensaiFlow: false,
    hasDRPAI: has('drp-ai'),
    hasTIDL: has('tidl'),
    hasAkida: has('akida'),
    hasMemryx: false,
    hasStAton: false,
    hasCevaNpn: false,
    hasNordicAxon: false,
    hasQaic: false,
    hideOptimizations: false,
    uiSection: e.uiSection,
    supportedEngines: [...e.engines],
    preferredEngine: e.engines[0]!,
    docsUrl: e.docs,
    ...(e.firmwareRepoUrl ? { firmwareRepoUrl: e.firmwareRepoUrl } : {}),
    modelVariants: has('akida')
      ? [{ variant: 'akida', supported: true }, { variant: 'int8', supported: false, hint: 'Akida runs its own quantized model' }, { variant: 'float32', supported: false, hint: 'Akida runs its own quantized model' }]
      : [
          e.float32Only ? { variant: 'int8', supported: false, hint: 'This accelerator runs float32 models' } : { variant: 'int8', supported: true },
          { variant: 'float32', supported: true },
        ],
    parameters: (e.parameters ?? []).map((p) => ({ ...p })),
  };
}

/** Every target, in the order clients show them. */
export function deploymentTargetCatalog(): DeploymentTarget[] {
  return ENTRIES.map(target);
}

export const DEPLOYMENT_TARGET_FORMATS: readonly string[] = ENTRIES.map((e) => e.format);

/** Names that are no target's format, for a 400 naming them. */
export const unknownTargetFormats = (formats: readonly string[]): string[] => formats.filter((f) => !DEPLOYMENT_TARGET_FORMATS.includes(f));

/**
 * The targets a white label enables (all of them without a white label), in catalog order. A white
 * label lists formats; formats no longer in the catalog are ignored.
 */
export function deploymentTargetsFor(whitelabel: { deploymentTargets: readonly string[] } | null): DeploymentTarget[] {
  const all = deploymentTargetCatalog();
  return whitelabel === null ? all : all.filter((t) => whitelabel.deploymentTargets.includes(t.format));
}
