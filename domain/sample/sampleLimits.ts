// Ranges every sample value must fall in before it may enter the log. Parsers refuse values outside
// them with a message naming the field, and the sample decider refuses them again, so no upload (or
// any future path to IngestSample) can append a value a projection cannot apply (1e308 as an
// interval made the length Infinity, which broke the samples read model for every tenant).

/** Shortest interval between values, in ms: 1 GHz. */
export const MIN_INTERVAL_MS = 1e-6;
/** Longest interval between values, in ms: one value a day. */
export const MAX_INTERVAL_MS = 86_400_000;
/**
 * Most value rows (time steps) a sample may hold: what the largest upload (100 MB) can carry, an
 * 8-bit mono WAV of 100 million samples. (20 million refused 16-bit WAVs of 40 MB and more.)
 */
export const MAX_VALUE_ROWS = 100_000_000;
/** Longest sample, in ms: MAX_VALUE_ROWS rows at MAX_INTERVAL_MS stays far below 2^53. */
export const MAX_SAMPLE_LENGTH_MS = MAX_VALUE_ROWS * MAX_INTERVAL_MS;
/** Largest image or video side, in pixels. */
export const MAX_PIXEL_SIDE = 65_535;
/** Longest device name or device type carried in a file, in characters. */
export const MAX_DEVICE_TEXT_LENGTH = 256;
/** Lowest and highest sampling frequency, in Hz: the intervals above, as frequencies. */
export const MIN_FREQUENCY_HZ = 1000 / MAX_INTERVAL_MS;
export const MAX_FREQUENCY_HZ = 1000 / MIN_INTERVAL_MS;
/** Longest label (of the sample, a bounding box or a structured label), in characters. */
export const MAX_SAMPLE_LABEL_LENGTH = 256;
/**
 * Longest stored file name, in characters: the 255 bytes a received name may hold, plus the
 * unique id `x-add-date-id` inserts.
 */
export const MAX_STORED_FILE_NAME_LENGTH = 512;
/** Most sensors (axes) of one sample, and the longest sensor name or unit. */
export const MAX_SENSORS = 10_000;
export const MAX_SENSOR_TEXT_LENGTH = 256;
/** Most metadata entries of one sample, and their longest key and value. */
export const MAX_METADATA_ENTRIES = 256;
export const MAX_METADATA_KEY_LENGTH = 256;
export const MAX_METADATA_VALUE_LENGTH = 16_384;
/** Most bounding boxes of one image, and how far from the image's origin a box may reach, in pixels. */
export const MAX_BOUNDING_BOXES = 10_000;
export const MAX_BOX_COORDINATE = 2 * MAX_PIXEL_SIDE;
/** Most structured (multi-label) segments of one sample. */
export const MAX_STRUCTURED_LABELS = 10_000;
/** Longest content type and upload source, in characters. */
export const MAX_CONTENT_TYPE_LENGTH = 256;
export const MAX_UPLOAD_SOURCE_LENGTH = 1024;
