// Which parser a sample file goes to. The content decides (its first bytes); the declared
// Content-Type and the file name's extension are checked against it: a specific one that names a
// different format is refused, so that a device owner learns their file is not what they think it
// is. Generic declared types (none, application/octet-stream, text/plain) and unknown extensions
// defer to the content.
import { isUtf8 } from 'node:buffer';
import { parseAcquisition } from './acquisitionFormat';
import { parseCsv } from './csvFormat';
import { parseImage } from './imageFormat';
import { SampleFormatError, type ParseInput, type ParsedSample, type SampleSource } from './sampleFormat';
import { nonVideoBrand, parseVideo } from './videoFormat';
import { parseWav } from './wavFormat';

export type ContentFormat = 'json' | 'cbor' | 'csv' | 'wav' | 'png' | 'jpeg' | 'mp4' | 'avi';

/** The content's format, or what it was seen to be instead ("a GIF image", "binary content starting with ..."). */
export type Detection = { format: ContentFormat } | { format: null; seen: string };

const DESCRIPTIONS: Record<ContentFormat, string> = {
  json: 'JSON',
  cbor: 'CBOR',
  csv: 'CSV text',
  wav: 'a WAV file',
  png: 'a PNG image',
  jpeg: 'a JPEG image',
  mp4: 'an MP4 video',
  avi: 'an AVI video',
};

/** Declared types that name a format: the CLI's mapping by extension (sdk-reference 4.2) and common aliases. */
const DECLARED_TYPES: Record<string, ContentFormat> = {
  'application/json': 'json',
  'text/json': 'json',
  'application/cbor': 'cbor',
  'application/x-cbor': 'cbor',
  'text/csv': 'csv',
  'application/csv': 'csv',
  'text/x-csv': 'csv',
  'text/comma-separated-values': 'csv',
  // What browsers on Windows send for a .csv file.
  'application/vnd.ms-excel': 'csv',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/vnd.wave': 'wav',
  'image/png': 'png',
  'image/x-png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/pjpeg': 'jpeg',
  'video/mp4': 'mp4',
  'video/avi': 'avi',
  'video/x-msvideo': 'avi',
  'video/msvideo': 'avi',
  'video/vnd.avi': 'avi',
};

/** Declared types that say nothing about the format. */
const GENERIC_TYPES = new Set(['', 'application/octet-stream', 'text/plain']);

const EXTENSIONS: Record<string, ContentFormat> = {
  json: 'json',
  cbor: 'cbor',
  csv: 'csv',
  wav: 'wav',
  wave: 'wav',
  png: 'png',
  jpg: 'jpeg',
  jpeg: 'jpeg',
  mp4: 'mp4',
  avi: 'avi',
};

export async function parseSampleFile(input: ParseInput): Promise<ParsedSample> {
  const detection = await detectContent(input.source);
  checkDeclared(input, detection);
  if (!detection.format) throw new SampleFormatError(`the file is not a supported sample format: it is ${detection.seen}`);
  switch (detection.format) {
    case 'json':
    case 'cbor':
      return parseAcquisition(input, detection.format);
    case 'csv':
      return parseCsv(input);
    case 'wav':
      return parseWav(input);
    case 'png':
    case 'jpeg':
      return parseImage(input);
    case 'mp4':
    case 'avi':
      return parseVideo(input);
  }
}

/**
 * The declared type and the extension against the content. A declared type outside the generic
 * ones must name the content's format (an unknown one such as image/gif never does); an extension
 * is checked only when it names a supported format.
 */
function checkDeclared(input: ParseInput, detection: Detection): void {
  const declared = (input.declaredType ?? '').trim().toLowerCase();
  const content = detection.format ? DESCRIPTIONS[detection.format] : detection.seen;
  const named = Object.hasOwn(DECLARED_TYPES, declared) ? DECLARED_TYPES[declared] : undefined;
  if (!GENERIC_TYPES.has(declared) && named !== detection.format) {
    // Text that is not a JSON object is taken for CSV; for a file declared as JSON, say what it lacks.
    if (named === 'json' && detection.format === 'csv') throw new SampleFormatError(`declared ${declared} but the content is not a JSON object (it does not start with "{")`);
    throw new SampleFormatError(`declared ${declared} but the content is ${content}`);
  }
  const dot = input.fileName.lastIndexOf('.');
  const extension = dot >= 0 ? input.fileName.slice(dot + 1).toLowerCase() : '';
  const byName = Object.hasOwn(EXTENSIONS, extension) ? EXTENSIONS[extension] : undefined;
  if (byName && byName !== detection.format) throw new SampleFormatError(`the file name ends in .${extension} but the content is ${content}`);
}

/** Bytes looked at to tell text from binary. */
const TEXT_HEAD = 4096;
const BLOCK = 64 * 1024;

/** The content's format by its first bytes. */
export async function detectContent(source: SampleSource): Promise<Detection> {
  if (source.size === 0) throw new SampleFormatError('the file is empty');
  const head = await source.read(0, Math.min(source.size, TEXT_HEAD));
  const latin1 = (from: number, to: number) => head.toString('latin1', from, to);
  const first = head[0]!;

  if (head.length >= 12 && latin1(0, 4) === 'RIFF') {
    const form = latin1(8, 12);
    if (form === 'WAVE') return { format: 'wav' };
    if (form === 'AVI ') return { format: 'avi' };
    if (form === 'WEBP') return { format: null, seen: 'a WebP image' };
    return { format: null, seen: `a RIFF file of form ${JSON.stringify(form)}` };
  }
  if (head.length >= 8 && latin1(4, 8) === 'ftyp') {
    const other = head.length >= 12 ? nonVideoBrand(latin1(8, 12)) : null;
    return other ? { format: null, seen: other } : { format: 'mp4' };
  }
  if (head.subarray(0, 8).equals(PNG_SIGNATURE)) return { format: 'png' };
  if (head.subarray(0, 3).equals(JPEG_SOI)) return { format: 'jpeg' };
  // A CBOR map (major type 5, definite or indefinite length), possibly behind the self-described tag.
  if (first >= 0xa0 && first <= 0xbf) return { format: 'cbor' };
  if (head.subarray(0, 3).equals(CBOR_SELF_DESCRIBED) && head.length > 3 && head[3]! >= 0xa0 && head[3]! <= 0xbf) return { format: 'cbor' };

  const other = knownBinary(head);
  if (other) return { format: null, seen: other };
  const text = textStart(head, source.size);
  if (text === 'binary') return { format: null, seen: `binary content starting with ${hex(head.subarray(0, 8))}` };
  if (text === 'not-utf8') return { format: null, seen: 'text that is not UTF-8 (save it as UTF-8)' };
  // JSON is recognised by its first character after whitespace (and a UTF-8 byte order mark).
  const firstChar = await firstNonWhitespace(source, text);
  if (firstChar === null) return { format: null, seen: 'only whitespace' };
  if (firstChar === '{') return { format: 'json' };
  if (firstChar === '[') return { format: null, seen: 'a JSON array (an acquisition file is a JSON object)' };
  // Whether the text is a CSV table with its header line is the CSV parser's judgement.
  return { format: 'csv' };
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG_SOI = Buffer.from([0xff, 0xd8, 0xff]);
const CBOR_SELF_DESCRIBED = Buffer.from([0xd9, 0xd9, 0xf7]);
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Formats that are recognised only to be named in the refusal, by their first bytes (made once: every upload looks). */
const KNOWN_BINARY: readonly (readonly [Buffer, string])[] = [
  [Buffer.from('GIF87a', 'latin1'), 'a GIF image'],
  [Buffer.from('GIF89a', 'latin1'), 'a GIF image'],
  [Buffer.from('II*\0', 'latin1'), 'a TIFF image'],
  [Buffer.from('MM\0*', 'latin1'), 'a TIFF image'],
  [Buffer.from('%PDF-', 'latin1'), 'a PDF document'],
  [Buffer.from('PK\x03\x04', 'latin1'), 'a ZIP archive'],
  [Buffer.from([0x1f, 0x8b]), 'a gzip archive'],
  [Buffer.from('OggS', 'latin1'), 'an Ogg file'],
  [Buffer.from('fLaC', 'latin1'), 'a FLAC file'],
  [Buffer.from('ID3', 'latin1'), 'an MP3 file'],
  [Buffer.from('PAR1', 'latin1'), 'a Parquet file'],
  [Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), 'a Matroska/WebM video'],
  [Buffer.from([0xff, 0xfe]), 'UTF-16 text (save it as UTF-8)'],
  [Buffer.from([0xfe, 0xff]), 'UTF-16 text (save it as UTF-8)'],
];

function knownBinary(head: Buffer): string | null {
  for (const [prefix, name] of KNOWN_BINARY) if (head.length >= prefix.length && head.compare(prefix, 0, prefix.length, 0, prefix.length) === 0) return name;
  return null;
}

/**
 * Where the text starts (after a UTF-8 byte order mark) when the head looks like UTF-8 text: no
 * control characters other than tab, line feed, carriage return and form feed, and valid UTF-8 (a
 * sequence cut by the end of the head is fine when the file goes on).
 */
function textStart(head: Buffer, fileSize: number): number | 'binary' | 'not-utf8' {
  const start = head.subarray(0, 3).equals(UTF8_BOM) ? 3 : 0;
  for (let i = start; i < head.length; i++) {
    const byte = head[i]!;
    if ((byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c) || byte === 0x7f) return 'binary';
  }
  let body = head.subarray(start);
  if (head.length < fileSize) {
    // Leave out a multi-byte sequence the head cuts.
    let cut = body.length;
    for (let back = 1; back <= 3 && body.length - back >= 0; back++) {
      const byte = body[body.length - back]!;
      if (byte >= 0xc0) {
        const needs = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
        if (needs > back) cut = body.length - back;
        break;
      }
      if (byte < 0x80) break;
    }
    body = body.subarray(0, cut);
  }
  // Checked without decoding: a string of the whole head for nothing.
  return isUtf8(body) ? start : 'not-utf8';
}

const isWhitespace = (byte: number) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d || byte === 0x0c;

/** The first character that is not whitespace, from `from` on, reading further than the head if needed. */
async function firstNonWhitespace(source: SampleSource, from: number): Promise<string | null> {
  for (let pos = from; pos < source.size; ) {
    const block = await source.read(pos, BLOCK);
    if (block.length === 0) return null;
    for (let i = 0; i < block.length; i++) if (!isWhitespace(block[i]!)) return String.fromCharCode(block[i]!);
    pos += block.length;
  }
  return null;
}

function hex(bytes: Buffer): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join(' ');
}
