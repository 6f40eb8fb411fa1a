// remote/remoteSocket.ts
import type { DeviceMessage } from '../domain/device/remoteMessages';
import type { HeldConnection } from './connectionRegistry';
/** What the relay may do with a device's socket. */
export interface RemoteSocket {
  /** Sends one JSON text frame; false when the socket is no longer open (nothing sent). */
  send(frame: string): boolean;
}
export type HeldDevice = HeldConnection<RemoteSocket>;
/** Hooks the remote server calls; the sampling relay implements them. */
export interface RemoteMessageHandler {
  /** Every parsed frame after the hello, except pings (never throws; errors are the handler's to log). */
  onDeviceMessage(held: HeldDevice, message: Exclude<DeviceMessage, { kind: 'hello' }>): void;
  /** After the socket ended and its DeviceDisconnected was appended (or found not needed). */
  onConnectionEnded(held: HeldDevice): void;
}
