import type { Logger } from 'pino';
import type { Socket } from 'socket.io';
import type { JobLogSink } from './jobFollower';

interface EnginePacket {
  data?: unknown;
}

const sizeOf = (packet: EnginePacket): number =>
  typeof packet.data === 'string' ? Buffer.byteLength(packet.data) : Buffer.isBuffer(packet.data) ? packet.data.length : 0;

/**
 * A socket.io socket as a JobLogSink. What is pending for the client is what Engine.IO holds in
 * its write buffer (counted from its `packetCreate` and `flush` events) plus what the TCP socket
 * has not written yet; both grow only when the client stops reading, which is what we measure.
 * `drained` gives up after `stallTimeoutMs` without the pending bytes falling.
 */
export function socketSink(socket: Socket, stallTimeoutMs: number, log: Logger): JobLogSink {
  const conn = socket.conn;
  const tcp = socket.request.socket;
  let buffered = 0;
  conn.on('packetCreate', (packet: EnginePacket) => {
    buffered += sizeOf(packet);
  });
  conn.on('flush', (packets: EnginePacket[]) => {
    for (const packet of packets) buffered -= sizeOf(packet);
  });
  const pendingBytes = () => buffered + tcp.writableLength;

  return {
    send(event, payload) {
      if (socket.connected) socket.emit(event, payload);
    },
    pendingBytes,
    drained(bytes) {
      return new Promise<boolean>((resolve) => {
        let last = pendingBytes();
        let lastProgress = Date.now();
        const finish = (result: boolean) => {
          clearInterval(poll);
          tcp.off('drain', check);
          conn.off('drain', check);
          socket.off('disconnect', onDisconnect);
          resolve(result);
        };
        const check = () => {
          if (!socket.connected) return finish(false);
          const now = pendingBytes();
          if (now <= bytes) return finish(true);
          if (now < last) lastProgress = Date.now();
          last = now;
          if (Date.now() - lastProgress > stallTimeoutMs) finish(false);
        };
        const onDisconnect = () => finish(false);
        // The events say when bytes leave; the poll notices a stall (no event at all) and a close.
        const poll = setInterval(check, 50);
        tcp.on('drain', check);
        conn.on('drain', check);
        socket.on('disconnect', onDisconnect);
        check();
      });
    },
    drop(reason) {
      // Closes the connection: the client reconnects and asks again from the last line it has.
      log.info({ socketId: socket.id, reason, pendingBytes: pendingBytes() }, 'dropped a job websocket');
      socket.disconnect(true);
      // A graceful close waits for the buffered output to drain (Engine.IO) and for the client's
      // close frame (ws, 30 s): neither comes from a client that stopped reading.
      tcp.destroy();
    },
  };
}
