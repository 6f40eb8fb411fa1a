// What a sample file becomes once its content is understood. Every format parser (acquisition
// JSON/CBOR, CSV, WAV, JPG/PNG, MP4/AVI) answers this shape, or throws SampleFormatError with a
// message a device owner can act on (it becomes the 400 answer's text).

/** The bytes of an uploaded file, already durable on disk: parsers read what they need. */
export interface SampleSource {
  size: number;
  /** Up to `length` bytes from `offset` (fewer at the end of the file). */
  read(offset: number, length: number): Promise<Buffer>;
  /** The whole file; used only by formats that must be parsed whole (JSON, CBOR, CSV). */
  readAll(): Promise<Buffer>;
}

export interface SampleSensor {
  name: string;
  units: string;
}

export type SampleKind = 'time-series' | 'audio' | 'image' | 'video';

export type SignatureCheck =
  /** Not an acquisition-format file: nothing to check. */
  | { method: 'none-needed' }
  /** `alg: none`: accepted, unsigned. */
  | { method: 'none'; valid: false }
  /** HS256 checked against every live HMAC key of the project; `keyIndex` is the one that matched. */
  | { method: 'HS256'; valid: boolean; keyIndex: number | null };

export interface ParsedSample {
  kind: SampleKind;
  /** Canonical MIME type of the content (`application/json`, `application/cbor`, `text/csv`, `audio/wav`, `image/png`, `image/jpeg`, `video/mp4`, `video/avi`). */
  contentType: string;
  /** Milliseconds between values; 0 for images. */
  intervalMs: number;
  /** Hz (1000 / intervalMs); 0 for images. */
  frequency: number;
  sensors: SampleSensor[];
  /** Number of value rows (time steps); 0 for images and videos. */
  valuesCount: number;
  /** Length of the sample in milliseconds (rows × interval, audio or video duration); 0 for images. */
  totalLengthMs: number;
  deviceName: string | null;
  deviceType: string | null;
  /** Pixel size of images (and videos where readable). */
  width: number | null;
  height: number | null;
  signature: SignatureCheck;
}

export interface ParseInput {
  source: SampleSource;
  /** The stored file name (already checked: no path separators). */
  fileName: string;
  /** Content-Type the client declared for this file or body, lowercased without parameters; null when none. */
  declaredType: string | null;
  /** The project's live HMAC keys, for HS256 acquisition files. */
  hmacKeys: readonly string[];
}

export class SampleFormatError extends Error {
  readonly code = 'BAD_SAMPLE';
  constructor(message: string) {
    super(message);
    this.name = 'SampleFormatError';
  }
}
