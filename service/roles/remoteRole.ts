// The remote role: the remote-management websocket server (remote/remoteServer.ts) on
// REMOTE_MGMT_PORT. The port opens first; until the read models have caught up (a hello checks its
// key in one), an upgrade is answered 503 and the device library reconnects a second later.
import http from 'node:http';
import os from 'node:os';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { IdAllocator } from '../../commands/idAllocator';
import { ApiKeyQueries } from '../../projections/apiKeys/apiKeyQueries';
import { DeviceQueries } from '../../projections/devices/deviceQueries';
import type { ProjectionHealth } from '../../projections/projectionStatus';
import { ProjectQueries } from '../../projections/projects/projectQueries';
import type { ConnectionRegistry } from '../../remote/connectionRegistry';
import { disconnectOrphans } from '../../remote/connectionIds';
import { refuseUpgrade, startRemoteServer, type RemoteLimits, type RemoteServer } from '../../remote/remoteServer';
import type { RemoteMessageHandler, RemoteSocket } from '../../remote/remoteSocket';
import { startSamplingRelay, type SamplingRelay } from '../../remote/samplingRelay';
import type { Stores } from '../composition';
import type { Config } from '../configuration';
import { retryAfterSeconds, type StartingState } from '../startingGate';
import { listen } from './listen';

export interface RemoteOpenDeps {
  stores: Stores;
  health: ProjectionHealth;
  /** Where device frames go after the hello; the sampling relay (remote/samplingRelay.ts) unless a test gives its own. */
  handler?: RemoteMessageHandler;
  limits?: Partial<RemoteLimits>;
}

export interface RemoteRole {
  /** `ws://127.0.0.1:<port>`. */
  readonly url: string;
  readonly server: http.Server;
  /** This process's prefix of connection ids. */
  readonly instanceId: string;
  /** The held device sockets; empty until `open`. */
  readonly registry: ConnectionRegistry<RemoteSocket> | undefined;
  /** Starts serving devices (after the read models have caught up). */
  open(deps: RemoteOpenDeps): Promise<void>;
  /** Records the held devices disconnected and closes their sockets; the service then closes `server`. */
  closeSockets(): Promise<void>;
}

/** `<hostname>-<port>` made safe for a connection id, unless REMOTE_INSTANCE_ID says otherwise. */
export function remoteInstanceId(config: Pick<Config, 'remoteInstanceId'>, port: number, hostname = os.hostname()): string {
  if (config.remoteInstanceId) return config.remoteInstanceId;
  const host = hostname.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 48) || 'host';
  return `${host}-${port}`;
}

/** Opens REMOTE_MGMT_PORT, refusing device sockets with 503 until `open`. */
export async function listenRemote(deps: { config: Config; log: Logger; starting: StartingState }): Promise<RemoteRole> {
  const { config } = deps;
  const log = deps.log.child({ role: 'remote' });
  const server = http.createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain; charset=utf-8', upgrade: 'websocket', connection: 'Upgrade' });
    res.end('This port serves the remote-management websocket for devices only\n');
  });
  // A client that sends garbage instead of HTTP gets a 400 and no crash.
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  const starting = (_req: http.IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    refuseUpgrade(socket, 503, `The service is starting: ${deps.starting.doing}`, retryAfterSeconds(deps.starting.progress()));
  };
  server.on('upgrade', starting);
  const port = await listen(server, config.remoteMgmtPort, config.host, log);
  const instanceId = remoteInstanceId(config, config.remoteMgmtPort === 0 ? port : config.remoteMgmtPort);
  let remote: RemoteServer | undefined;
  let relay: SamplingRelay | undefined;
  return {
    url: `ws://127.0.0.1:${port}`,
    server,
    instanceId,
    get registry() {
      return remote?.registry;
    },
    async open({ stores, health, handler, limits }) {
      const devices = new DeviceQueries(stores.readStore);
      const commands = { events: stores.events, ids: new IdAllocator(stores.events), devices };
      // Before any socket is held here, so every connection of this instance the read model shows is the previous run's.
      const orphans = await disconnectOrphans({ commands, connectedDevices: () => devices.remoteConnected(), instanceId, log });
      if (orphans > 0) log.info({ orphans, instanceId }, 'devices the previous run of this instance left connected were recorded disconnected');
      const projects = new ProjectQueries(stores.readStore);
      // Started before the server: a request appended once a device is held is seen. Its sockets are looked up when a request comes.
      if (!handler) relay = await startSamplingRelay({ events: stores.events, projects, registry: { connection: (id) => remote?.registry.connection(id), all: () => remote?.registry.all() ?? [].values() }, endConnection: (held, why) => remote?.end(held.connectionId, why), log });
      server.off('upgrade', starting);
      remote = startRemoteServer({
        server,
        commands,
        apiKeys: new ApiKeyQueries(stores.readStore),
        projects,
        health,
        log,
        handler: handler ?? relay!,
        instanceId,
        ...(limits ? { limits } : {}),
      });
      log.info({ instanceId }, 'remote management serving devices');
    },
    closeSockets: async () => {
      server.off('upgrade', starting);
      await remote?.close();
      // After the sockets: the progress reports their ends made are waited for.
      await relay?.stop();
    },
  };
}
