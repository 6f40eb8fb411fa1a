import type { ReadStore } from '../../stores/readstore/readStore';
import { DEVICES, type DeviceDocument } from './deviceDocument';

export class DeviceQueries {
  constructor(private readonly store: ReadStore) {}

  forProject(projectId: number): Promise<DeviceDocument[]> {
    return this.store.collection<DeviceDocument>(DEVICES).find({ projectId }, { sort: { created: 1, _id: 1 } });
  }
}
