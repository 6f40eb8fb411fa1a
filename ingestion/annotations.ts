import { ValidationError } from '../domain/shared/errors';
import { FileTooLargeError } from './receiveFile';
import type { ReceivedPart } from './receiveMultipart';
import { isLabelsFile, parseInfoLabels, type FileLabels } from '../domain/sample/formats/labels';
import { SampleFormatError } from '../domain/sample/formats/sampleFormat';
import type { FileAnnotations } from './ingestFile';

/** Side files are small JSON documents: anything larger is not one. */
const MAX_LABELS_FILE_BYTES = 16 * 1024 * 1024;

function merge(into: Map<string, FileLabels>, from: Map<string, FileLabels>): void {
  for (const [name, labels] of from) into.set(name, { ...into.get(name), ...labels });
}

/**
 * Splits a multipart batch into its data files and what its side files (`info.labels`,
 * `structured_labels.labels`, `bounding_boxes.labels`, ...) say about them. A side file that
 * cannot be read refuses the whole batch: storing the files without their labels would be wrong.
 */
export async function parseAnnotationFiles(parts: readonly ReceivedPart[]): Promise<{ annotations: Map<string, FileAnnotations>; dataParts: ReceivedPart[] }> {
  const labels = new Map<string, FileLabels>();
  const dataParts: ReceivedPart[] = [];
  for (const part of parts) {
    const name = part.fileName;
    if (!isLabelsFile(name)) {
      dataParts.push(part);
      continue;
    }
    if (part.file instanceof FileTooLargeError || part.file.size > MAX_LABELS_FILE_BYTES) throw new ValidationError(`${name} is too large for a labels file`);
    const source = part.file.source();
    try {
      merge(labels, parseInfoLabels(await source.readAll(), name));
    } catch (error) {
      if (error instanceof SampleFormatError) throw new ValidationError(error.message, 'BAD_LABELS_FILE');
      throw error;
    } finally {
      await source.close();
    }
  }
  const annotations = new Map<string, FileAnnotations>();
  for (const [name, l] of labels) {
    annotations.set(name, {
      ...(l.label !== undefined ? { label: l.label } : {}),
      ...(l.category ? { category: l.category } : {}),
      ...(l.metadata ? { metadata: l.metadata } : {}),
      ...(l.boundingBoxes ? { boundingBoxes: l.boundingBoxes } : {}),
      ...(l.structuredLabels ? { structuredLabels: l.structuredLabels.map(({ label, startIndex, endIndex }) => ({ label, startIndex, endIndex })) } : {}),
    });
  }
  return { annotations, dataParts };
}
