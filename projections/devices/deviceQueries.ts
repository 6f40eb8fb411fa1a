import type { ReadStore } from '../../stores/readstore/readStore';
import { DEVICES, deviceDocumentId, type DeviceDocument } from './deviceDocument';

export class DeviceQueries {
  constructor(private readonly store: ReadStore) {}

  forProject(projectId: number): Promise<DeviceDocument[]> {
    return this.store.collection<DeviceDocument>(DEVICES).find({ projectId }, { sort: { created: 1, _id: 1 } });
  }

  /** Every device the read model shows connected to remote management (a `remote` process's recovery at start). */
  remoteConnected(): Promise<DeviceDocument[]> {
    return this.store.collection<DeviceDocument>(DEVICES).find({ remoteMgmtConnected: true }, { sort: { _id: 1 } });
  }

  byId(projectId: number, deviceId: string): Promise<DeviceDocument | null> {
    return this.store.collection<DeviceDocument>(DEVICES).findOne({ _id: deviceDocumentId(projectId, deviceId) });
  }
}
