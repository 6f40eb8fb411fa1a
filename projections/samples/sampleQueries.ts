import type { Filter, ReadStore } from '../../stores/readstore/readStore';
import { readableKeys } from '../projection';
import { SAMPLES, type SampleDocument } from './sampleDocument';

/** The raw-data listing filters of the SDK's listSamples/countSamples. */
export interface SampleFilters {
  category: 'training' | 'testing' | 'validation' | 'post-processing' | 'all';
  labels?: string[];
  filename?: string;
  search?: string;
  signatureValidity?: 'both' | 'valid' | 'invalid';
  minLength?: number;
  maxLength?: number;
  minFrequency?: number;
  maxFrequency?: number;
  dataType?: 'audio' | 'image';
  minId?: number;
  maxId?: number;
  minDate?: Date;
  maxDate?: Date;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function filterOf(projectId: number, f: SampleFilters): Filter {
  const range = (min?: number, max?: number) =>
    min === undefined && max === undefined ? undefined : { ...(min === undefined ? {} : { $gte: min }), ...(max === undefined ? {} : { $lte: max }) };
  const filter: Filter = {
    projectId,
    deleted: false,
    // Anomaly uploads from deployed devices are not part of the data sets.
    category: f.category === 'all' ? { $in: ['training', 'testing', 'validation', 'post-processing'] } : f.category,
  };
  if (f.labels) filter.label = { $in: f.labels };
  if (f.filename) filter.fileName = { $regex: `^${escapeRegex(f.filename)}`, $options: 'i' };
  if (f.search) filter.$or = [{ fileName: { $regex: escapeRegex(f.search), $options: 'i' } }, { label: { $regex: escapeRegex(f.search), $options: 'i' } }];
  if (f.signatureValidity === 'valid') filter.signatureValidate = true;
  if (f.signatureValidity === 'invalid') filter.signatureValidate = false;
  const length = range(f.minLength, f.maxLength);
  if (length) filter.totalLengthMs = length;
  const frequency = range(f.minFrequency, f.maxFrequency);
  if (frequency) filter.frequency = frequency;
  if (f.dataType) filter.kind = f.dataType;
  const id = range(f.minId, f.maxId);
  if (id) filter._id = id;
  if (f.minDate || f.maxDate) {
    filter.created = { ...(f.minDate ? { $gte: f.minDate.toISOString() } : {}), ...(f.maxDate ? { $lte: f.maxDate.toISOString() } : {}) };
  }
  return filter;
}

/** The metadata as the device sent it (the projection stores its keys escaped). */
const readable = (sample: SampleDocument): SampleDocument => ({ ...sample, metadata: readableKeys(sample.metadata) });

export class SampleQueries {
  constructor(private readonly store: ReadStore) {}

  private get samples() {
    return this.store.collection<SampleDocument>(SAMPLES);
  }

  async list(projectId: number, filters: SampleFilters, page: { limit: number; offset: number }): Promise<SampleDocument[]> {
    return (await this.samples.find(filterOf(projectId, filters), { sort: { _id: -1 }, skip: page.offset, limit: page.limit })).map(readable);
  }

  count(projectId: number, filters: SampleFilters): Promise<number> {
    return this.samples.count(filterOf(projectId, filters));
  }

  /** A live sample of the project, or null. */
  async byId(projectId: number, sampleId: number): Promise<SampleDocument | null> {
    const sample = await this.samples.findOne({ _id: sampleId, projectId, deleted: false });
    return sample && readable(sample);
  }

  /** Whether the project's current data set holds this content (x-disallow-duplicates). */
  async hasContent(projectId: number, sha256: string): Promise<boolean> {
    return (await this.samples.count({ projectId, sha256, deleted: false, category: { $ne: 'anomaly' } })) > 0;
  }

  /** The distinct contents of a project's samples, deleted ones included. */
  async contentsOf(projectId: number): Promise<string[]> {
    return [...new Set((await this.samples.find({ projectId })).map((s) => s.sha256))];
  }

  /** Whether a sample of another project, deleted or not, is stored under this content address. */
  async referencedOutside(projectId: number, sha256: string): Promise<boolean> {
    return (await this.samples.count({ sha256, projectId: { $ne: projectId } })) > 0;
  }

  /** Whether any sample, of any project, deleted or not, is stored under this content address. */
  async referencesBlob(sha256: string): Promise<boolean> {
    return (await this.samples.count({ sha256 })) > 0;
  }

  /** Live samples of a category ('all': every data set), for delete-all. */
  ids(projectId: number, category: SampleFilters['category']): Promise<SampleDocument[]> {
    return this.samples.find(filterOf(projectId, { category }));
  }
}
