// The remote-management websocket server (docs/remote-management.md): devices say hello with a
// project API key, are recorded connected (DeviceConnected) and held in a registry for the sampling
// relay; a socket that ends, goes silent or is replaced is recorded disconnected. Everything a device
// sends is untrusted: frames are parsed by `parseDeviceMessage`, rate-limited by a FrameBudget, and no
// failure of a command or of a handler ends the process.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { systemContext } from '../commands/commandContext';
import { connectDevice, disconnectDevice, type DeviceCommandDeps } from '../commands/devices/deviceCommands';
import type { DeviceDisconnectReason } from '../domain/device/deviceEvents';
import { parseDeviceMessage, REMOTE_FRAME_MAX_BYTES, type RemoteHello } from '../domain/device/remoteMessages';
import { FrameBudget, helloReply, REMOTE_FRAME_BURST, REMOTE_FRAMES_PER_SECOND } from '../domain/device/remoteReplies';
import { DomainError } from '../domain/shared/errors';
import { isLive, type ApiKeyQueries } from '../projections/apiKeys/apiKeyQueries';
import { KEY_ENDED } from './accessEndings';
import type { ProjectionHealth } from '../projections/projectionStatus';
import type { ProjectQueries } from '../projections/projects/projectQueries';
import { ConnectionRegistry } from './connectionRegistry';
import { newConnectionId } from './connectionIds';
import { authenticateHello } from './helloAuthentication';
import type { HeldDevice, RemoteMessageHandler, RemoteSocket } from './remoteSocket';

export interface RemoteLimits {
  /** A socket that has not said hello within this is closed. */
  helloTimeoutMs: number;
  /** How often the server pings a socket (the `ws` client answers by itself). */
  pingIntervalMs: number;
  /** A socket that sent no frame and no pong for this long is terminated (reason `timeout`). */
  silenceTimeoutMs: number;
  /** How often silent sockets are looked for: a dead device is shown disconnected within silence + this. */
  sweepIntervalMs: number;
  /** Open sockets per process, greeted or not; an upgrade beyond is answered 503. */
  maxSockets: number;
  /** Hellos being authenticated and recorded at once; beyond, a socket is closed unanswered (the device retries). */
  maxHellosInProgress: number;
  /** Unparseable frames after the hello that a socket may send before it is closed. */
  maxInvalidFrames: number;
  framesPerSecond: number;
  frameBurst: number;
  /** On close, how long the disconnect events of the held devices may take. */
  stopTimeoutMs: number;
  /**
   * How often the held sockets' keys are checked again, for the ends no event announces (a key's
   * expiry); revocations and deletions end a socket as their events arrive (the sampling relay).
   */
  accessRecheckMs: number;
  /**
   * Hellos one device (project and device id) may say per minute on average, and in a burst: each
   * one recorded is an event, so a device reconnecting in a loop must not write without end.
   */
  hellosPerDevicePerMinute: number;
  helloBurstPerDevice: number;
}

export const DEFAULT_REMOTE_LIMITS: RemoteLimits = {
  helloTimeoutMs: 10_000,
  pingIntervalMs: 15_000,
  silenceTimeoutMs: 40_000,
  sweepIntervalMs: 2_500,
  maxSockets: 10_000,
  maxHellosInProgress: 200,
  maxInvalidFrames: 20,
  framesPerSecond: REMOTE_FRAMES_PER_SECOND,
  frameBurst: REMOTE_FRAME_BURST,
  stopTimeoutMs: 5_000,
  accessRecheckMs: 60_000,
  hellosPerDevicePerMinute: 10,
  helloBurstPerDevice: 10,
};

/** Devices whose hello budgets are kept at most; beyond, the oldest entry is forgotten (a fresh budget is a full one). */
const HELLO_BUDGETS_MAX = 100_000;

/** Close codes the server uses (RFC 6455 7.4.1). */
const CLOSE = { normal: 1000, goingAway: 1001, policy: 1008, internal: 1011, tryAgain: 1013 } as const;

export interface RemoteServerDeps {
  server: http.Server;
  commands: DeviceCommandDeps;
  apiKeys: Pick<ApiKeyQueries, 'live' | 'byId'>;
  projects: Pick<ProjectQueries, 'byId'>;
  health?: ProjectionHealth;
  log: Logger;
  handler?: RemoteMessageHandler;
  /** Stable for a deployment slot: the prefix of this process's connection ids. */
  instanceId: string;
  limits?: Partial<RemoteLimits>;
  now?: () => Date;
}

export interface RemoteServer {
  readonly registry: ConnectionRegistry<RemoteSocket>;
  /** Open sockets, greeted or not. */
  readonly socketCount: number;
  /**
   * Ends a held socket whose access ended (`why` is sent as the close reason): it leaves the registry
   * at once, so nothing more is sent to it, and is recorded disconnected with reason `access-ended`.
   * False when this process does not hold it.
   */
  end(connectionId: string, why: string): boolean;
  /** Records every held device disconnected (`server-stopped`, within `stopTimeoutMs`) and closes every socket. */
  close(): Promise<void>;
}

type Phase = 'awaiting-hello' | 'authenticating' | 'connected' | 'ended';

interface DeviceSocket {
  ws: WebSocket;
  host: string;
  phase: Phase;
  lastHeardMs: number;
  lastPingMs: number;
  budget: FrameBudget;
  invalidFrames: number;
  held?: HeldDevice;
  /** Why the socket ended, when the server ended it; `closed` otherwise. */
  endReason?: DeviceDisconnectReason;
  /** Set when a newer socket of the device took its place: its end is then no disconnect. */
  replaced?: boolean;
  /** Set when `end` took it out of the registry before its close: its end is still a disconnect. */
  cutOff?: boolean;
  helloTimer?: NodeJS.Timeout;
  /** Settles once the socket has closed (and its end is among `endings`). */
  closed: Promise<void>;
}

/** The remote address as shown in the device list: IPv4 without its IPv6 mapping. */
function hostOf(req: http.IncomingMessage): string {
  const address = req.socket.remoteAddress ?? 'unknown';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/** Answers an upgrade request with a plain HTTP error: the device library then reconnects a second later. */
export function refuseUpgrade(socket: Duplex, status: number, message: string, retryAfterSeconds?: number): void {
  const headers = [`HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}`, 'Connection: close', 'Content-Type: text/plain; charset=utf-8', `Content-Length: ${Buffer.byteLength(message)}`];
  if (retryAfterSeconds !== undefined) headers.push(`Retry-After: ${retryAfterSeconds}`);
  socket.end(`${headers.join('\r\n')}\r\n\r\n${message}`);
}

/** Serves devices on `deps.server`'s upgrades from now on (the caller records orphans first: disconnectOrphans). */
export function startRemoteServer(deps: RemoteServerDeps): RemoteServer {
  const limits: RemoteLimits = { ...DEFAULT_REMOTE_LIMITS, ...deps.limits };
  const now = deps.now ?? (() => new Date());
  const log = deps.log;
  const registry = new ConnectionRegistry<RemoteSocket>();
  const sockets = new Map<WebSocket, DeviceSocket>();
  // The greeted ones by connection id: a replacement finds the socket it replaces.
  const greeted = new Map<string, DeviceSocket>();
  // What a stop waits for: the ends being recorded, and hellos being recorded.
  const endings = new Set<Promise<void>>();
  const hellos = new Set<Promise<void>>();
  // Connect and disconnect of one device run in order in this process (the log decides between processes).
  const deviceQueues = new Map<string, Promise<unknown>>();
  let hellosInProgress = 0;
  let stopping = false;

  const inDeviceOrder = <T>(projectId: number, deviceId: string, work: () => Promise<T>): Promise<T> => {
    const key = `${projectId}:${deviceId}`;
    const previous = deviceQueues.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    deviceQueues.set(key, settled);
    void settled.then(() => {
      if (deviceQueues.get(key) === settled) deviceQueues.delete(key);
    });
    return next;
  };

  const wss = new WebSocketServer({ noServer: true, maxPayload: REMOTE_FRAME_MAX_BYTES, clientTracking: false });

  const close = (s: DeviceSocket, code: number, reason: string) => {
    if (s.ws.readyState === WebSocket.OPEN || s.ws.readyState === WebSocket.CONNECTING) s.ws.close(code, reason.slice(0, 120));
  };

  const recordDisconnect = async (held: HeldDevice, reason: DeviceDisconnectReason): Promise<void> => {
    try {
      await inDeviceOrder(held.projectId, held.deviceId, () =>
        disconnectDevice(deps.commands, { projectId: held.projectId, deviceId: held.deviceId, connectionId: held.connectionId, reason }, systemContext('remote', now())),
      );
    } catch (error) {
      log.error({ err: error, projectId: held.projectId, deviceId: held.deviceId, reason }, 'could not record a device disconnected');
    }
  };

  const ended = (held: HeldDevice) => {
    try {
      deps.handler?.onConnectionEnded(held);
    } catch (error) {
      log.error({ err: error, deviceId: held.deviceId }, 'the remote message handler failed on a connection end');
    }
  };

  const onClose = (s: DeviceSocket) => {
    clearTimeout(s.helloTimer);
    sockets.delete(s.ws);
    if (s.held) greeted.delete(s.held.connectionId);
    const wasConnected = s.phase === 'connected';
    s.phase = 'ended';
    const held = s.held;
    // A socket that ends while its hello is being recorded is finished by the hello (finishHello).
    if (!wasConnected || !held) return;
    const ending = (async () => {
      if ((registry.remove(held.connectionId) || s.cutOff) && !s.replaced) await recordDisconnect(held, s.endReason ?? 'closed');
      ended(held);
    })();
    endings.add(ending);
    void ending.finally(() => endings.delete(ending));
  };

  const helloBudgets = new Map<string, FrameBudget>();
  const helloBudget = (projectId: number, deviceId: string): FrameBudget => {
    const key = `${projectId}:${deviceId}`;
    let budget = helloBudgets.get(key);
    if (!budget) {
      if (helloBudgets.size >= HELLO_BUDGETS_MAX) helloBudgets.delete(helloBudgets.keys().next().value!);
      budget = new FrameBudget(limits.hellosPerDevicePerMinute / 60, limits.helloBurstPerDevice);
      helloBudgets.set(key, budget);
    }
    return budget;
  };

  const finishHello = async (s: DeviceSocket, hello: RemoteHello): Promise<void> => {
    const auth = await authenticateHello(hello.apiKey, { apiKeys: deps.apiKeys, projects: deps.projects, health: deps.health }, now());
    if (!auth.ok) {
      if ('retry' in auth) {
        log.info({ reason: auth.reason }, 'a device hello could not be checked yet; closed so that it retries');
        return close(s, CLOSE.tryAgain, auth.reason);
      }
      // Nothing recorded: the key says nothing about a project we may write to.
      sendFrame(s.ws, helloReply({ ok: false, reason: auth.reason, auth: false }, now()));
      return close(s, CLOSE.policy, 'authentication failed');
    }
    if (s.phase !== 'authenticating' || stopping) return close(s, CLOSE.goingAway, 'server stopping');
    if (!helloBudget(auth.projectId, hello.deviceId).take(Date.now())) {
      // Unanswered: a `hello: false` would stop the official library for good; it retries in a second.
      log.warn({ projectId: auth.projectId, deviceId: hello.deviceId }, 'a device says hello too often; asked to come back later');
      return close(s, CLOSE.tryAgain, 'too many connections of this device; try again later');
    }
    const held: HeldDevice = { projectId: auth.projectId, deviceId: hello.deviceId, connectionId: newConnectionId(deps.instanceId), socket: remoteSocket(s.ws), apiKeyId: auth.apiKeyId };
    try {
      await inDeviceOrder(held.projectId, held.deviceId, () =>
        connectDevice(
          deps.commands,
          {
            projectId: held.projectId,
            deviceId: hello.deviceId,
            deviceType: hello.deviceType,
            connectionId: held.connectionId,
            host: s.host,
            mode: hello.mode,
            sensors: hello.sensors,
            supportsSnapshotStreaming: hello.supportsSnapshotStreaming,
            ...(hello.inferenceInfo ? { inferenceInfo: hello.inferenceInfo } : {}),
          },
          { ...systemContext('remote', now()), actor: `apikey:${auth.apiKeyId}` },
        ),
      );
    } catch (error) {
      if (error instanceof DomainError) {
        // The hello itself is at fault: the device would fail again, so it is told why and stops.
        log.info({ err: error, projectId: held.projectId }, 'a device hello was refused');
        sendFrame(s.ws, helloReply({ ok: false, reason: error.message }, now()));
        return close(s, CLOSE.policy, 'hello refused');
      }
      // The store failed: unanswered, so the device reconnects (a hello:false would stop it for good).
      log.error({ err: error, projectId: held.projectId, deviceId: hello.deviceId }, 'could not record a device connected');
      return close(s, CLOSE.internal, 'could not record the connection');
    }
    if (s.phase !== 'authenticating' || s.ws.readyState !== WebSocket.OPEN) {
      // It went away while being recorded.
      await recordDisconnect(held, stopping ? 'server-stopped' : 'closed');
      return;
    }
    s.held = held;
    s.phase = 'connected';
    greeted.set(held.connectionId, s);
    const previous = registry.add(held);
    sendFrame(s.ws, helloReply({ ok: true }, now()));
    log.info({ projectId: held.projectId, deviceId: held.deviceId, connectionId: held.connectionId, mode: hello.mode, host: s.host }, 'device connected');
    if (previous) {
      // Its DeviceDisconnected would be a no-op now (the decider counts the current socket's end only).
      const old = greeted.get(previous.connectionId);
      if (old) {
        old.replaced = true;
        close(old, CLOSE.normal, 'replaced by a newer connection of the device');
      } else ended(previous);
    }
  };

  const onHello = (s: DeviceSocket, hello: RemoteHello) => {
    s.phase = 'authenticating';
    clearTimeout(s.helloTimer);
    if (hellosInProgress >= limits.maxHellosInProgress) {
      log.warn({ hellosInProgress }, 'too many hellos at once; a device was asked to come back');
      return close(s, CLOSE.tryAgain, 'busy');
    }
    hellosInProgress++;
    const done = finishHello(s, hello)
      .catch((error: unknown) => {
        log.error({ err: error }, 'a device hello failed');
        close(s, CLOSE.internal, 'internal error');
      })
      .finally(() => {
        hellosInProgress--;
        hellos.delete(done);
      });
    hellos.add(done);
  };

  const onMessage = (s: DeviceSocket, data: RawData, isBinary: boolean) => {
    const nowMs = Date.now();
    s.lastHeardMs = nowMs;
    if (s.phase === 'ended') return;
    if (!s.budget.take(nowMs)) {
      log.warn({ deviceId: s.held?.deviceId, host: s.host }, 'a device sent frames faster than allowed; closed');
      return close(s, CLOSE.policy, 'too many messages');
    }
    const text = isBinary ? undefined : rawText(data);
    const parsed = text === undefined ? { ok: false as const, reason: 'Messages must be JSON text frames' } : parseDeviceMessage(text);
    if (s.phase === 'awaiting-hello') {
      if (!parsed.ok || parsed.value.kind !== 'hello') {
        s.phase = 'ended';
        clearTimeout(s.helloTimer);
        sendFrame(s.ws, helloReply({ ok: false, reason: parsed.ok ? 'The first message must be a hello' : parsed.reason }, new Date(nowMs)));
        return close(s, CLOSE.policy, 'no hello');
      }
      return onHello(s, parsed.value.hello);
    }
    // The library sends nothing until it has its reply.
    if (s.phase === 'authenticating') return;
    if (!parsed.ok || parsed.value.kind === 'hello') {
      s.invalidFrames++;
      log.debug({ deviceId: s.held?.deviceId, reason: parsed.ok ? 'a second hello' : parsed.reason }, 'a device frame was dropped');
      if (s.invalidFrames > limits.maxInvalidFrames) {
        log.warn({ deviceId: s.held?.deviceId, invalidFrames: s.invalidFrames }, 'a device sent too many invalid frames; closed');
        close(s, CLOSE.policy, 'too many invalid messages');
      }
      return;
    }
    const held = s.held;
    if (!held || !deps.handler) return;
    try {
      deps.handler.onDeviceMessage(held, parsed.value);
    } catch (error) {
      log.error({ err: error, deviceId: held.deviceId }, 'the remote message handler failed');
    }
  };

  const onConnection = (ws: WebSocket, req: http.IncomingMessage) => {
    const nowMs = Date.now();
    let closed!: () => void;
    const s: DeviceSocket = {
      ws,
      host: hostOf(req),
      phase: 'awaiting-hello',
      lastHeardMs: nowMs,
      lastPingMs: nowMs,
      budget: new FrameBudget(limits.framesPerSecond, limits.frameBurst),
      invalidFrames: 0,
      closed: new Promise<void>((resolve) => (closed = resolve)),
    };
    sockets.set(ws, s);
    s.helloTimer = setTimeout(() => {
      if (s.phase === 'awaiting-hello') close(s, CLOSE.policy, 'no hello in time');
    }, limits.helloTimeoutMs);
    ws.on('message', (data, isBinary) => onMessage(s, data, isBinary));
    // The library pings every 30 s (`ws` answers by itself); either way the device is alive.
    ws.on('pong', () => (s.lastHeardMs = Date.now()));
    ws.on('ping', () => (s.lastHeardMs = Date.now()));
    // A frame over maxPayload, a bad frame: ws closes the socket itself after this.
    ws.on('error', (error) => log.info({ err: error, host: s.host }, 'a device socket failed'));
    ws.on('close', () => {
      onClose(s);
      closed();
    });
  };

  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    if (stopping) return refuseUpgrade(socket, 503, 'The server is stopping', 5);
    if (sockets.size >= limits.maxSockets) {
      log.warn({ sockets: sockets.size }, 'device socket limit reached; a connection was refused');
      return refuseUpgrade(socket, 503, 'Too many device connections', 30);
    }
    wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, req));
  };
  deps.server.on('upgrade', onUpgrade);

  const end = (connectionId: string, why: string): boolean => {
    const s = greeted.get(connectionId);
    if (!s || s.phase !== 'connected' || !registry.remove(connectionId)) return false;
    s.cutOff = true;
    s.endReason = 'access-ended';
    log.info({ projectId: s.held?.projectId, deviceId: s.held?.deviceId, why }, 'ended a device socket whose access ended');
    close(s, CLOSE.policy, why);
    return true;
  };

  // Keys expire without an event: every held socket's key is looked at again now and then.
  let rechecking = false;
  const recheck = setInterval(() => {
    if (rechecking) return;
    rechecking = true;
    void (async () => {
      for (const held of [...registry.all()]) {
        if (held.apiKeyId === undefined) continue;
        try {
          const key = await deps.apiKeys.byId(held.apiKeyId);
          if (!key || !isLive(key, now())) end(held.connectionId, KEY_ENDED);
        } catch (error) {
          log.warn({ err: error }, "could not check a device socket's API key again; checked at the next round");
          return;
        }
      }
    })().finally(() => (rechecking = false));
  }, limits.accessRecheckMs);
  recheck.unref();

  const sweep = setInterval(() => {
    const nowMs = Date.now();
    for (const s of sockets.values()) {
      if (nowMs - s.lastHeardMs > limits.silenceTimeoutMs) {
        s.endReason = 'timeout';
        log.info({ deviceId: s.held?.deviceId, host: s.host }, 'a silent device socket was terminated');
        s.ws.terminate();
      } else if (nowMs - s.lastPingMs >= limits.pingIntervalMs && s.ws.readyState === WebSocket.OPEN) {
        s.lastPingMs = nowMs;
        s.ws.ping();
      }
    }
  }, limits.sweepIntervalMs);
  sweep.unref();

  return {
    registry,
    end,
    get socketCount() {
      return sockets.size;
    },
    async close() {
      if (stopping) return;
      stopping = true;
      clearInterval(sweep);
      clearInterval(recheck);
      deps.server.off('upgrade', onUpgrade);
      for (const s of sockets.values()) {
        s.endReason = 'server-stopped';
        close(s, CLOSE.goingAway, 'server stopping');
      }
      // A peer that does not answer the close frame is cut after a short grace.
      const grace = setTimeout(() => {
        for (const s of sockets.values()) s.ws.terminate();
      }, Math.min(1000, limits.stopTimeoutMs));
      const deadline = new Promise<'deadline'>((resolve) => setTimeout(() => resolve('deadline'), limits.stopTimeoutMs).unref());
      const waitEndings = async () => {
        await Promise.all([...sockets.values()].map((s) => s.closed));
        await Promise.all([...hellos]);
        await Promise.all([...endings]);
      };
      const outcome = await Promise.race([waitEndings().then(() => 'done' as const), deadline]);
      clearTimeout(grace);
      if (outcome === 'deadline') log.warn({ stillHeld: registry.size }, 'not every device could be recorded disconnected before the stop');
      wss.close();
    },
  };
}

function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

function sendFrame(ws: WebSocket, frame: string): boolean {
  if (ws.readyState !== WebSocket.OPEN) return false;
  ws.send(frame);
  return true;
}

function remoteSocket(ws: WebSocket): RemoteSocket {
  return { send: (frame) => sendFrame(ws, frame) };
}
