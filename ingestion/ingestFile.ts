import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { IdAllocator } from '../commands/idAllocator';
import { SAMPLE_CONTENT, ingestSample, sampleContentValue } from '../commands/samples/sampleCommands';
import type { UniquenessReservations } from '../commands/uniqueness';
import { sampleStream } from '../domain/sample/sampleEvents';
import type { BoundingBox, IngestionCategory, StructuredLabel } from '../domain/sample/sampleEvents';
import { ConflictError, ValidationError } from '../domain/shared/errors';
import type { ReadModelSync } from '../projections/projectionRunner';
import type { SampleQueries } from '../projections/samples/sampleQueries';
import type { BlobStore } from '../stores/blobstore/blobStore';
import type { EventStore, Position } from '../stores/eventstore/eventStore';
import { checkFileName, checkStructuredLabels, labelFromFileName } from '../domain/sample/formats/labels';
import type { ParsedSample } from '../domain/sample/formats/sampleFormat';
import { SAMPLE_TEXT_RULES, checkSample, type CheckedSample, type SampleDescription } from '../domain/sample/checkSample';
import { textProblem } from '../domain/shared/textRules';
import type { KeyedLock } from './keyedLock';
import type { SampleParser } from './sampleParser';
import type { ReceivedFile } from './receiveFile';
import type { UploadOptions } from './uploadHeaders';

export interface IngestDeps {
  events: EventStore;
  ids: IdAllocator;
  blobs: BlobStore;
  samples: SampleQueries;
  /** Read your writes: the duplicate check below must see the samples recorded just before. */
  sync: ReadModelSync;
  settleTimeoutMs: number;
  contentLocks: KeyedLock;
  parser: SampleParser;
  reservations: UniquenessReservations;
}

export interface UploadTarget {
  projectId: number;
  apiKeyId: number;
  category: IngestionCategory;
  /** Divide files between training and testing, 80/20, by their content hash (stable for a given file). */
  split: boolean;
  hmacKeys: readonly string[];
  /** The ids of `hmacKeys`, in the same order. */
  hmacKeyIds: readonly number[];
  requestId: string;
}

/** What a side file (info.labels, bounding_boxes.labels...) says about one data file. */
export interface FileAnnotations {
  label?: string | null;
  category?: IngestionCategory;
  metadata?: Record<string, string>;
  boundingBoxes?: BoundingBox[];
  structuredLabels?: StructuredLabel[];
}

const splitCategory = (sha256: string): IngestionCategory => (parseInt(sha256.slice(0, 2), 16) < 205 ? 'training' : 'testing');

/** `name.ext` → `name.<unique id>.ext` (x-add-date-id). */
function withUniqueId(fileName: string): string {
  const ext = path.extname(fileName);
  const id = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  return ext ? `${fileName.slice(0, -ext.length)}.${id}${ext}` : `${fileName}.${id}`;
}

/**
 * One file of an upload: parsed and checked from the received copy, stored in the blob store
 * (durable), then recorded as a SampleIngested event. Only then is it acknowledged: a crash before
 * the event leaves at most an unreferenced blob, never a half sample.
 */
export async function ingestFile(
  deps: IngestDeps,
  target: UploadTarget,
  options: UploadOptions,
  file: { received: ReceivedFile; fileName: string; declaredType: string | null; annotations?: FileAnnotations },
): Promise<{ fileName: string; sampleId: number; position: Position }> {
  const fileName = checkFileName(file.fileName);
  const parsed = await deps.parser.parse(file.received, fileName, file.declaredType, target.hmacKeys);
  const notes = file.annotations ?? {};
  if (notes.structuredLabels) checkStructuredLabels(notes.structuredLabels, parsed.valuesCount);
  const category = notes.category ?? (target.split ? splitCategory(file.received.sha256) : target.category);
  // Checked before anything is stored, so that a refused sample leaves neither a blob nor a content
  // reservation behind; the sample decider takes the checked value as it is.
  const sample = checkSample(describeSample(target, options, file.received, fileName, parsed, category, notes));
  if (!options.disallowDuplicates) return store(deps, target, file, sample);
  // Checked against the read model (content stored before, with or without this header), then
  // reserved for the new sample: two processes receiving the same file cannot both take it.
  // The lock keeps this process's own racing requests from reserving in vain.
  return deps.contentLocks.run(`${target.projectId}:${file.received.sha256}`, async () => {
    const duplicate = () =>
      new ValidationError(`${fileName}: a file with the same content (SHA-256 ${file.received.sha256}) is already in the project`, 'DUPLICATE_SAMPLE');
    if (await deps.samples.hasContent(target.projectId, file.received.sha256)) throw duplicate();
    const sampleId = await deps.ids.next('sample');
    const ctx = { actor: `apikey:${target.apiKeyId}`, correlationId: target.requestId, now: new Date() };
    try {
      await deps.reservations.reserve(SAMPLE_CONTENT, sampleContentValue(target.projectId, file.received.sha256), sampleStream(sampleId), ctx, 'duplicate');
    } catch (error) {
      if (error instanceof ConflictError) throw duplicate();
      throw error;
    }
    const result = await store(deps, target, file, sample, sampleId);
    await deps.sync.waitFor(result.position, deps.settleTimeoutMs);
    return result;
  });
}

/** A text the device sent, refused with the name the device knows it by (a header, a field of the file). */
function deviceText(value: string | null, field: string): string | null {
  if (value === null || value.trim() === '') return null;
  const problem = textProblem(value, field, SAMPLE_TEXT_RULES.device);
  if (problem !== undefined) throw new ValidationError(problem);
  return value;
}

/** What a parsed file says as a sample of `target` (exported for the stage bench, which describes its samples so too). */
export function describeSample(
  target: UploadTarget,
  options: UploadOptions,
  received: Pick<ReceivedFile, 'sha256' | 'size'>,
  fileName: string,
  parsed: ParsedSample,
  category: IngestionCategory,
  notes: FileAnnotations,
): SampleDescription {
  const label = notes.label !== undefined ? notes.label : options.label !== undefined ? options.label : labelFromFileName(fileName);
  const signature = parsed.signature;
  return {
    projectId: target.projectId,
    category,
    fileName: options.addDateId ? withUniqueId(fileName) : fileName,
    label,
    sha256: received.sha256,
    size: received.size,
    contentType: parsed.contentType,
    kind: parsed.kind,
    intervalMs: parsed.intervalMs,
    frequency: parsed.frequency,
    sensors: parsed.sensors,
    valuesCount: parsed.valuesCount,
    totalLengthMs: parsed.totalLengthMs,
    deviceName: deviceText(parsed.deviceName, '"payload.device_name"'),
    deviceType: parsed.deviceType !== null ? deviceText(parsed.deviceType, '"payload.device_type"') : deviceText(options.deviceType, 'Header x-device-type'),
    width: parsed.width,
    height: parsed.height,
    signatureMethod: signature.method === 'none-needed' ? null : signature.method,
    signatureValidate: signature.method === 'HS256' ? signature.valid : false,
    signatureKeyId: signature.method === 'HS256' && signature.valid && signature.keyIndex !== null ? (target.hmacKeyIds[signature.keyIndex] ?? null) : null,
    metadata: { ...options.metadata, ...notes.metadata },
    boundingBoxes: notes.boundingBoxes ?? [],
    structuredLabels: notes.structuredLabels ?? [],
    uploadSource: options.uploadSource,
  };
}

async function store(
  deps: IngestDeps,
  target: UploadTarget,
  file: { received: ReceivedFile },
  sample: CheckedSample,
  reservedSampleId?: number,
): Promise<{ fileName: string; sampleId: number; position: Position }> {
  const stored = await file.received.store(deps.blobs);
  if (stored.sha256 !== file.received.sha256) throw new Error(`received file changed while stored (${file.received.sha256} became ${stored.sha256})`);
  const { sampleId, position } = await ingestSample(
    deps,
    // The size the store counted: the content is the one checked (its hash is compared above).
    { ...sample, size: stored.size },
    { actor: `apikey:${target.apiKeyId}`, correlationId: target.requestId, now: new Date() },
    reservedSampleId,
  );
  return { fileName: sample.fileName, sampleId, position };
}
