// The device sockets one `remote` process holds: one per device of a project, found by device or
// by connection id (a `DeviceSamplingRequested` names the connection it is for).

export interface HeldConnection<S> {
  projectId: number;
  deviceId: string;
  connectionId: string;
  socket: S;
  /** The project API key the device said hello with: its revocation or expiry ends the socket. */
  apiKeyId?: number;
}

export class ConnectionRegistry<S> {
  private readonly byDevice = new Map<string, HeldConnection<S>>();
  private readonly byConnection = new Map<string, HeldConnection<S>>();

  private static key(projectId: number, deviceId: string): string {
    return `${projectId}:${deviceId}`;
  }

  /**
   * Holds a device's new socket. Answers the one it replaces (same project and device id), which
   * the caller closes and disconnects with reason `replaced`.
   */
  add(held: HeldConnection<S>): HeldConnection<S> | undefined {
    const key = ConnectionRegistry.key(held.projectId, held.deviceId);
    const previous = this.byDevice.get(key);
    if (previous) this.byConnection.delete(previous.connectionId);
    this.byDevice.set(key, held);
    this.byConnection.set(held.connectionId, held);
    return previous && previous.connectionId !== held.connectionId ? previous : undefined;
  }

  /** Lets go of a socket that ended. False when it was not held (already replaced or removed). */
  remove(connectionId: string): boolean {
    const held = this.byConnection.get(connectionId);
    if (!held) return false;
    this.byConnection.delete(connectionId);
    const key = ConnectionRegistry.key(held.projectId, held.deviceId);
    if (this.byDevice.get(key)?.connectionId === connectionId) this.byDevice.delete(key);
    return true;
  }

  connection(connectionId: string): HeldConnection<S> | undefined {
    return this.byConnection.get(connectionId);
  }

  device(projectId: number, deviceId: string): HeldConnection<S> | undefined {
    return this.byDevice.get(ConnectionRegistry.key(projectId, deviceId));
  }

  get size(): number {
    return this.byDevice.size;
  }

  all(): IterableIterator<HeldConnection<S>> {
    return this.byDevice.values();
  }
}
