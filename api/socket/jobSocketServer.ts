// The job websocket (sdk-reference 3, DESIGN "Websocket"): socket.io 4 on the management API's
// server at /socket.io, speaking Engine.IO 3 to the official SDK, which opens a plain websocket
// straight away (`/socket.io/?token=...&EIO=3&transport=websocket&onDemandLogs=true`).
import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { Socket as NetSocket } from 'node:net';
import type { Logger } from 'pino';
import { Server, type Socket } from 'socket.io';
import { z } from 'zod';
import type { ReadModelSync } from '../../projections/projectionRunner';
import type { EventStore } from '../../stores/eventstore/eventStore';
import { JobFollower, type JobFollowerLimits } from './jobFollower';
import { JobLogFeed } from './jobLogFeed';
import { SAMPLING_PROGRESS_EVENT, SamplingProgressFeed } from './samplingProgressFeed';
import type { SocketAccessDeps } from './socketAccess';
import { SocketAccessGuard, type GuardedSocket, type Mark } from './socketAccessGuard';
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
  /** How often every open socket's access is checked again, for ends no event announces. */
  accessRecheckMs: number;
  /** How long a socket whose access ended has to take its last message before it is cut off. */
  endGraceMs: number;
}

export const DEFAULT_JOB_SOCKET_LIMITS: JobSocketLimits = {
  maxSockets: 10_000,
  maxJobsPerSocket: 16,
  startsPerMinute: 60,
  stallTimeoutMs: 30_000,
  maxFrameBytes: 16 * 1024,
  feedIdleStopMs: 30_000,
  accessRecheckMs: 60_000,
  endGraceMs: 5_000,
  pageSize: 64,
  highWaterBytes: 256 * 1024,
};

export interface JobSocketDeps {
  events: EventStore;
  tokens: SocketTokenService;
  /** What a token's grant and scope are checked against: the read models REST reads. */
  access: SocketAccessDeps;
  /** The read models' progress: access checks wait for the endings the log already showed. */
  sync?: ReadModelSync;
  /** The most a check waits for the read models (SETTLE_TIMEOUT_MS). */
  settleTimeoutMs?: number;
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

type Admission = { claims: SocketTokenClaims; until: number; mark: Mark };

/** The token's signature and time, then whether the grant behind it still reaches its project or organization. */
async function admit(req: IncomingMessage, tokens: SocketTokenService, guard: SocketAccessGuard): Promise<Admission | { refused: string }> {
  let token: string | null;
  try {
    token = new URL(req.url ?? '', 'http://localhost').searchParams.get('token');
  } catch {
    token = null;
  }
  if (!token) return { refused: 'A socket token is required (GET /v1/api/{projectId}/socket-token)' };
  const claims = await tokens.verify(token);
  if ('invalid' in claims) return { refused: claims.invalid };
  const { standing, mark } = await guard.admit(claims);
  return standing.holds ? { claims, until: standing.until, mark } : { refused: standing.reason };
}

export function attachJobSocket(server: HttpServer, deps: JobSocketDeps): JobSocketServer {
  const limits: JobSocketLimits = { ...DEFAULT_JOB_SOCKET_LIMITS, ...deps.limits };
  const log = deps.log;
  const feed = new JobLogFeed(deps.events, log, { idleStopMs: limits.feedIdleStopMs, retryDelayMs: 1_000 });
  const guard = new SocketAccessGuard({
    access: deps.access,
    events: deps.events,
    feed,
    ...(deps.sync ? { sync: deps.sync } : {}),
    settleTimeoutMs: deps.settleTimeoutMs ?? 5_000,
    recheckMs: limits.accessRecheckMs,
    releaseAfterMs: limits.feedIdleStopMs,
    log,
  });
  const sampling = new SamplingProgressFeed(feed, log);
  const admitted = new WeakMap<IncomingMessage, Admission>();
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
      admit(req, deps.tokens, guard).then(
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
    const admission = admitted.get(socket.request);
    if (!admission) {
      socket.disconnect(true);
      return;
    }
    const { claims } = admission;
    const sink = socketSink(socket, limits.stallTimeoutMs, log);
    const followers = new Map<number, JobFollower>();
    let starts: number[] = [];
    let ended = false;
    // Requests are answered in order: each waits for the access check of the one before.
    let queue = Promise.resolve();

    // A project socket also hears its project's sampling requests (startSampling) as they progress.
    let unfollowSampling: Promise<(() => void) | undefined> = Promise.resolve(undefined);
    if ('projectId' in claims) {
      unfollowSampling = sampling
        .follow(claims.projectId, (message) => {
          if (!ended) sink.send(SAMPLING_PROGRESS_EVENT, message);
        })
        .catch((error: unknown) => {
          log.warn({ err: error }, 'could not follow the sampling progress for a job websocket');
          return undefined;
        });
    }
    const stopFollowing = () => {
      for (const follower of followers.values()) follower.stop();
      followers.clear();
      void unfollowSampling.then((stop) => stop?.());
    };
    const guarded: GuardedSocket = {
      claims,
      end(reason) {
        if (ended) return;
        ended = true;
        // Nothing more of any job, then the reason, then the close.
        stopFollowing();
        log.info({ socketId: socket.id, reason }, 'ended a job websocket whose access ended');
        if (socket.connected) socket.emit('access-ended', { reason });
        socket.disconnect(true);
        // A client that does not read would hold the connection open past its access.
        const tcp = socket.request.socket;
        setTimeout(() => tcp.destroy(), limits.endGraceMs).unref();
      },
    };

    const startLogStream = async (payload: unknown) => {
      const parsed = StartLogStream.safeParse(payload);
      if (!parsed.success) {
        socket.emit('job-error', { error: 'start-log-stream needs {jobId: number, lastReceivedTimestamp?: number}' });
        return;
      }
      const { jobId, lastReceivedTimestamp } = parsed.data;
      let holds: boolean;
      try {
        holds = await guard.check(guarded);
      } catch (error) {
        log.warn({ err: error, jobId }, 'could not check the access of a job websocket');
        socket.emit(`job-error-${jobId}`, { error: 'Could not check your access to the job, try again' });
        return;
      }
      if (!holds || ended) return;
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
    };

    socket.on('start-log-stream', (payload: unknown) => {
      if (ended) return;
      const now = Date.now();
      starts = starts.filter((t) => now - t < 60_000);
      starts.push(now);
      if (starts.length > limits.startsPerMinute) {
        sink.drop('too many start-log-stream requests');
        return;
      }
      queue = queue
        .then(() => (ended ? undefined : startLogStream(payload)))
        .catch((error: unknown) => log.error({ err: error }, 'a start-log-stream request failed'));
    });

    socket.on('disconnect', () => {
      guard.unregister(guarded);
      stopFollowing();
    });

    guard.register(guarded, admission.until, admission.mark);
    if (!ended) socket.emit('hello', { hello: { version: 1 } });
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
      await guard.close();
      await feed.close();
    },
  };
}
