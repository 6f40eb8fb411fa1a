// The job websocket (sdk-reference 3, DESIGN "Websocket"): socket.io 4 on the management API's
// server at /socket.io, speaking Engine.IO 3 to the official SDK, which opens a plain websocket
// straight away (`/socket.io/?token=...&EIO=3&transport=websocket&onDemandLogs=true`).
import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { Socket as NetSocket } from 'node:net';
import type { Logger } from 'pino';
import { Server, type Socket } from 'socket.io';
import { z } from 'zod';
import type { OrganizationQueries } from '../../projections/organizations/organizationQueries';
import type { ProjectQueries } from '../../projections/projects/projectQueries';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { JobFollower, type JobFollowerLimits } from './jobFollower';
import { JobLogFeed } from './jobLogFeed';
import { socketSink } from './socketSink';
import type { SocketTokenClaims, SocketTokenService } from './socketTokens';

export interface JobSocketLimits extends JobFollowerLimits {
  /** Open sockets per process; more are refused at the handshake. */
  maxSockets: number;
  /** Jobs one socket follows at once. */
  maxJobsPerSocket: number;
  /** `start-log-stream` requests per socket per minute; a client asking more often is disconnected. */
  startsPerMinute: number;
  /** A client that reads nothing for this long while output waits for it is disconnected. */
  stallTimeoutMs: number;
  /** Largest frame a client may send (it sends only small requests). */
  maxFrameBytes: number;
  /** How long the log subscription outlives the last follower. */
  feedIdleStopMs: number;
}

export const DEFAULT_JOB_SOCKET_LIMITS: JobSocketLimits = {
  maxSockets: 10_000,
  maxJobsPerSocket: 16,
  startsPerMinute: 60,
  stallTimeoutMs: 30_000,
  maxFrameBytes: 16 * 1024,
  feedIdleStopMs: 30_000,
  pageSize: 64,
  highWaterBytes: 256 * 1024,
};

export interface JobSocketDeps {
  events: EventStore;
  tokens: SocketTokenService;
  projects: ProjectQueries;
  /** For organization tokens; without it they are refused. */
  organizations?: Pick<OrganizationQueries, 'byId' | 'keysOf'>;
  log: Logger;
  limits?: Partial<JobSocketLimits>;
}

export interface JobSocketServer {
  io: Server;
  feed: JobLogFeed;
  /** Disconnects every socket and ends the log subscription; the HTTP server is left to its owner. */
  close(): Promise<void>;
}

const StartLogStream = z.object({
  jobId: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  // Milliseconds since the epoch (the SDK sends 0), or an ISO time.
  lastReceivedTimestamp: z
    .union([z.number().finite(), z.iso.datetime({ offset: true }).transform((t) => Date.parse(t))])
    .optional(),
});

/** The token's checks, plus what may have changed since it was issued: the project is gone, the user left it. */
async function admit(req: IncomingMessage, deps: JobSocketDeps): Promise<SocketTokenClaims | { refused: string }> {
  let token: string | null;
  try {
    token = new URL(req.url ?? '', 'http://localhost').searchParams.get('token');
  } catch {
    token = null;
  }
  if (!token) return { refused: 'A socket token is required (GET /v1/api/{projectId}/socket-token)' };
  const claims = await deps.tokens.verify(token);
  if ('invalid' in claims) return { refused: claims.invalid };
  if ('organizationId' in claims) {
    const organization = await deps.organizations?.byId(claims.organizationId);
    if (!organization) return { refused: 'The organization of this socket token no longer exists' };
    const caller = claims.caller;
    if (caller.kind === 'user' && !organization.members.some((m) => m.userId === caller.userId && m.role !== 'guest')) return { refused: 'You are no longer a member of this organization who may read its jobs' };
    if (caller.kind === 'organizationKey' && !(await deps.organizations!.keysOf(organization.id)).some((k) => k.apiKeyId === caller.apiKeyId)) return { refused: 'The API key of this socket token was revoked' };
    return claims;
  }
  const project = await deps.projects.byId(claims.projectId);
  if (!project) return { refused: 'The project of this socket token no longer exists' };
  if (claims.caller.kind === 'user' && !project.collaboratorIds.includes(claims.caller.userId)) return { refused: 'You are no longer a collaborator on this project' };
  return claims;
}

export function attachJobSocket(server: HttpServer, deps: JobSocketDeps): JobSocketServer {
  const limits: JobSocketLimits = { ...DEFAULT_JOB_SOCKET_LIMITS, ...deps.limits };
  const log = deps.log;
  const feed = new JobLogFeed(deps.events, log, { idleStopMs: limits.feedIdleStopMs, retryDelayMs: 1_000 });
  const admitted = new WeakMap<IncomingMessage, SocketTokenClaims>();
  const connections = new Set<NetSocket>();

  const io = new Server(server, {
    path: '/socket.io',
    allowEIO3: true,
    // No long-polling: every official client opens a websocket, and one transport keeps the
    // per-socket buffer measurable (socketSink).
    transports: ['websocket'],
    serveClient: false,
    maxHttpBufferSize: limits.maxFrameBytes,
    allowRequest(req, callback) {
      if (io.engine.clientsCount >= limits.maxSockets) return callback('Too many job websockets, try again later', false);
      admit(req, deps).then(
        (result) => {
          if ('refused' in result) {
            log.debug({ reason: result.refused }, 'refused a job websocket');
            return callback(result.refused, false);
          }
          admitted.set(req, result);
          callback(null, true);
        },
        (error: unknown) => {
          log.warn({ err: error }, 'could not check a job websocket token');
          callback('The service is unavailable, try again shortly', false);
        },
      );
    },
  });

  io.engine.on('connection', (conn: { request: IncomingMessage; once(event: 'close', listener: () => void): void }) => {
    const tcp = conn.request.socket;
    connections.add(tcp);
    conn.once('close', () => connections.delete(tcp));
  });

  io.on('connection', (socket: Socket) => {
    const claims = admitted.get(socket.request);
    if (!claims) {
      socket.disconnect(true);
      return;
    }
    const sink = socketSink(socket, limits.stallTimeoutMs, log);
    const followers = new Map<number, JobFollower>();
    let starts: number[] = [];

    socket.on('start-log-stream', (payload: unknown) => {
      const now = Date.now();
      starts = starts.filter((t) => now - t < 60_000);
      starts.push(now);
      if (starts.length > limits.startsPerMinute) {
        sink.drop('too many start-log-stream requests');
        return;
      }
      const parsed = StartLogStream.safeParse(payload);
      if (!parsed.success) {
        socket.emit('job-error', { error: 'start-log-stream needs {jobId: number, lastReceivedTimestamp?: number}' });
        return;
      }
      const { jobId, lastReceivedTimestamp } = parsed.data;
      // Asking again for a job restarts its stream from the new timestamp.
      followers.get(jobId)?.stop();
      followers.delete(jobId);
      for (const [id, f] of followers) if (!f.active) followers.delete(id);
      if (followers.size >= limits.maxJobsPerSocket) {
        socket.emit(`job-error-${jobId}`, { error: `A socket follows at most ${limits.maxJobsPerSocket} jobs at once` });
        return;
      }
      const follower = new JobFollower(jobId, lastReceivedTimestamp ?? 0, sink, { events: deps.events, feed, log, limits });
      followers.set(jobId, follower);
      const scope = 'projectId' in claims ? claims.projectId : { organizationId: claims.organizationId };
      const owner = 'projectId' in claims ? `project ${claims.projectId}` : `organization ${claims.organizationId}`;
      follower.start(scope).then(
        (outcome) => {
          if (outcome === 'following') return;
          if (followers.get(jobId) === follower) followers.delete(jobId);
          socket.emit(`job-error-${jobId}`, { error: `Job ${jobId} not found in ${owner}` });
        },
        (error: unknown) => {
          if (followers.get(jobId) === follower) followers.delete(jobId);
          log.warn({ err: error, jobId }, 'could not start a job log stream');
          socket.emit(`job-error-${jobId}`, { error: 'Could not read the job output, try again' });
        },
      );
    });

    socket.on('disconnect', () => {
      for (const follower of followers.values()) follower.stop();
      followers.clear();
    });

    socket.emit('hello', { hello: { version: 1 } });
  });

  return {
    io,
    feed,
    async close() {
      io.disconnectSockets(true);
      io.engine.close();
      // A client that does not answer the close handshake would keep the HTTP server from closing.
      for (const tcp of connections) tcp.destroy();
      connections.clear();
      await feed.close();
    },
  };
}
