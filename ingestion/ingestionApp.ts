import Koa from 'koa';
import type { Logger } from 'pino';
import { accessLog } from '../api/http/accessLog';
import { requestId } from '../api/http/requestId';
import type { BlobStore } from '../stores/blobstore/blobStore';
import type { EventStore } from '../stores/eventstore/eventStore';
import { textErrors } from './textErrors';

export interface IngestionDeps {
  events: EventStore;
  blobs: BlobStore;
  log: Logger;
}

/**
 * The device ingestion API (ports 4810/4811). The foundation serves its text/plain error
 * conventions; the upload endpoints, parsers and signature checks are the ingestion issue's work.
 */
export function createIngestionApp(deps: IngestionDeps): Koa {
  const app = new Koa({ proxy: false });
  app.on('error', (error: unknown, ctx?: Koa.Context) => {
    deps.log.error({ err: error, requestId: ctx?.state.requestId }, 'ingestion request failed');
  });
  app.use(requestId());
  app.use(accessLog(deps.log));
  app.use(textErrors());
  return app;
}
