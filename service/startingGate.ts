// The service listens before its read models have caught up with the log, so that a probe, a user
// or a device during a long catch-up gets an answer that says so rather than "connection refused".
// Until the real app is built, a gate hands every request to a starting app that accepts nothing:
// a command decided on read models that are behind (uniqueness, keys) could be wrong, and an upload
// checks its API key in one. Each API answers in its own format, as it does a busy store (503 with
// Retry-After; stores/transientErrors.ts), and `/health` keeps its shape with `status: "starting"`.
import type { RequestListener } from 'node:http';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import type { Logger } from 'pino';
import { accessLog } from '../http/accessLog';
import { jsonEnvelope } from '../api/http/envelope';
import { logRequestErrors } from '../http/requestErrors';
import { requestId } from '../http/requestId';
import { DomainError } from '../domain/shared/errors';
import { textErrors } from '../ingestion/textErrors';
import type { ProjectionFailure, ProjectionHealth } from '../projections/projectionStatus';
import { describeCatchUp, type CatchUpProgress } from './catchUpProgress';

/**
 * The request listener of a server that is listening before its app exists. The server keeps this
 * one listener (socket.io wraps it when it attaches), so opening the gate changes the app for every
 * connection, those kept alive since the start included.
 */
export class StartingGate {
  private current: RequestListener;

  constructor(starting: RequestListener) {
    this.current = starting;
  }

  readonly listener: RequestListener = (req, res) => this.current(req, res);

  /** From now on every request goes to `app`; those in progress finish where they began. */
  open(app: RequestListener): void {
    this.current = app;
  }
}

/** What a start is waiting for, as its starting answers state it. */
export interface StartingState {
  /** In words, e.g. "catching up the read models"; changes as the start goes on. */
  doing: string;
  /** Undefined until the catch-up has begun (the log's head is read first). */
  progress(): CatchUpProgress | undefined;
  /** The projections that failed on an event meanwhile: they do not hold the start up, /health names them. */
  readonly health: ProjectionHealth;
}

/** Without an estimate, the interval of the progress lines; with one, the time left within bounds. */
const RETRY_AFTER_UNKNOWN = 5;
const RETRY_AFTER_MAX = 30;

export function retryAfterSeconds(progress: CatchUpProgress | undefined): number {
  if (progress === undefined || progress.secondsLeft === null) return RETRY_AFTER_UNKNOWN;
  return Math.min(RETRY_AFTER_MAX, Math.max(1, progress.secondsLeft));
}

export function startingSentence(state: StartingState): string {
  const progress = state.progress();
  return `The service is starting: ${state.doing}${progress ? `, ${describeCatchUp(progress)}` : ''}`;
}

export class ServiceStartingError extends DomainError {
  constructor(message: string) {
    super('SERVICE_STARTING', message, 503);
  }
}

/** Every request but /health: 503, thrown for the API's own error middleware to answer in its format. */
function refuseWhileStarting(state: StartingState, consequence: string): Middleware {
  return async (ctx) => {
    const seconds = retryAfterSeconds(state.progress());
    ctx.set('Retry-After', String(seconds));
    throw new ServiceStartingError(`${startingSentence(state)}. ${consequence}; try again in ${seconds} s`);
  };
}

/** `/health` while starting: the shape of http/healthRoute.ts, 503, and the progress in `catchUp`. */
function startingHealth(state: StartingState, log: Logger): Middleware {
  return async (ctx) => {
    let failingProjections: ProjectionFailure[] = [];
    try {
      failingProjections = await state.health.failures();
    } catch (error) {
      log.warn({ err: error }, 'reading the projections\' status for /health failed while starting');
    }
    const progress = state.progress();
    ctx.set('cache-control', 'no-store');
    ctx.set('Retry-After', String(retryAfterSeconds(progress)));
    ctx.status = 503;
    ctx.body = { success: false, status: 'starting', error: startingSentence(state), failingProjections, catchUp: progress ?? null };
  };
}

function startingApp(state: StartingState, log: Logger, errors: Middleware, consequence: string): Koa {
  const app = new Koa({ proxy: false });
  app.on('error', logRequestErrors(log, 'request failed while starting'));
  app.use((ctx, next) => (ctx.set('X-Content-Type-Options', 'nosniff'), next()));
  app.use(requestId());
  app.use(accessLog(log));
  app.use(errors);
  app.use(new Router().get('/health', startingHealth(state, log)).routes());
  app.use(refuseWhileStarting(state, consequence));
  return app;
}

/** The management API while starting: JSON envelope (`{ success: false, error }`). */
export const startingApiApp = (state: StartingState, log: Logger): Koa => startingApp(state, log, jsonEnvelope(), 'Nothing was changed');

/** The ingestion API while starting: text/plain, as its other failures. */
export const startingIngestionApp = (state: StartingState, log: Logger): Koa => startingApp(state, log, textErrors(), 'The sample was not recorded');
