// What a DSP block's generated features depend on in the impulse, as one SHA-256: the input block's
// windowing (or image sizing), the DSP block's type, version and axes, and its parameters with the
// catalog defaults filled in. The generate-features job records it with its result; the impulse is
// `complete` only while every DSP block's latest result carries the fingerprint its blocks have now,
// so a later parameter or window change makes it incomplete until the features are generated again.
import { createHash } from 'node:crypto';
import { dspBlockDefinition } from '../impulse/blockCatalog';
import { resolveDspConfig, type DspConfigValues } from '../impulse/dspConfig';
import type { DspBlock, InputBlock } from '../impulse/impulseEvents';

/** JSON with object keys sorted, so the same content always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The fingerprint of DSP block `dspId` in this impulse, or null when the impulse has no such block
 * (or it has no input block). Names and titles are left out: renaming a block does not change its
 * features; the learn blocks too, which read the features but do not make them.
 */
export function featuresFingerprint(
  impulse: { inputBlocks: readonly InputBlock[]; dspBlocks: readonly DspBlock[]; dspConfigs: Readonly<Record<string, DspConfigValues>> },
  dspId: number,
): string | null {
  const dspBlock = impulse.dspBlocks.find((b) => b.id === dspId);
  const input = dspBlock && impulse.inputBlocks.find((b) => b.id === dspBlock.input);
  if (!dspBlock || !input) return null;
  const def = dspBlockDefinition(dspBlock.type);
  const saved = impulse.dspConfigs[String(dspId)] ?? null;
  const config = def ? resolveDspConfig(def, saved, {}) : (saved ?? {});
  const { type, windowSizeMs, windowIncreaseMs, frequencyHz, padZeros, labelingMethodMultiLabel, imageWidth, imageHeight, resizeMode, resizeMethod, cropAnchor } = input;
  return createHash('sha256')
    .update(
      canonical({
        input: { id: input.id, type, windowSizeMs, windowIncreaseMs, frequencyHz, padZeros, labelingMethodMultiLabel, imageWidth, imageHeight, resizeMode, resizeMethod, cropAnchor },
        dsp: { id: dspBlock.id, type: dspBlock.type, implementationVersion: dspBlock.implementationVersion, axes: dspBlock.axes },
        config,
      }),
    )
    .digest('hex');
}
