// Ranges every sample value must fall in before it may enter the log. Parsers refuse values outside
// them with a message naming the field, and the sample decider refuses them again, so no upload (or
// any future path to IngestSample) can append a value a projection cannot apply (issue: 1e308 as an
// interval made the length Infinity, which broke the samples read model for every tenant).

/** Shortest interval between values, in ms: 1 GHz. */
export const MIN_INTERVAL_MS = 1e-6;
/** Longest interval between values, in ms: one value a day. */
export const MAX_INTERVAL_MS = 86_400_000;
/** Most value rows (time steps) a sample may hold. */
export const MAX_VALUE_ROWS = 20_000_000;
/** Longest sample, in ms: MAX_VALUE_ROWS rows at MAX_INTERVAL_MS stays far below 2^53. */
export const MAX_SAMPLE_LENGTH_MS = MAX_VALUE_ROWS * MAX_INTERVAL_MS;
/** Largest image or video side, in pixels. */
export const MAX_PIXEL_SIDE = 65_535;
/** Longest device name or device type carried in a file, in characters. */
export const MAX_DEVICE_TEXT_LENGTH = 256;
