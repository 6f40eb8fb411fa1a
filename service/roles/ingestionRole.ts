// The ingestion role: the ingestion API (ingestion/ingestionApp.ts) on INGESTION_PORT and, with the
// certificate from service/secrets.ts, on INGESTION_TLS_PORT. Both ports open first, answering 503
// "starting"; `open` puts the app behind them once the read models have caught up (an upload checks
// its API key in one).
import http from 'node:http';
import https from 'node:https';
import type { Logger } from 'pino';
import { IdAllocator } from '../../commands/idAllocator';
import type { ApiKeyUsageRecorder } from '../../commands/projects/projectCommands';
import { answerClientErrors } from '../../http/clientErrors';
import { incomingFolder } from '../../ingestion/incomingFolder';
import { createIngestionApp } from '../../ingestion/ingestionApp';
import type { SampleParser } from '../../ingestion/sampleParser';
import { ApiKeyQueries } from '../../projections/apiKeys/apiKeyQueries';
import type { ReadModelSync } from '../../projections/projectionRunner';
import type { ProjectionHealth } from '../../projections/projectionStatus';
import { ProjectQueries } from '../../projections/projects/projectQueries';
import { SampleQueries } from '../../projections/samples/sampleQueries';
import { closeServers } from '../closeServers';
import type { Stores } from '../composition';
import type { Config } from '../configuration';
import { tlsCredentials } from '../secrets';
import { StartingGate, startingIngestionApp, type StartingState } from '../startingGate';
import { listen, localUrl } from './listen';

/** What the ingestion API needs once the read models have caught up. */
export interface IngestionOpenDeps {
  stores: Stores;
  sync: ReadModelSync;
  health: ProjectionHealth;
  apiKeyUsage: ApiKeyUsageRecorder;
  /** The sample parser the process shares with the api role; the service closes it after the servers. */
  sampleParser(): SampleParser;
}

export interface IngestionRole {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** `https://127.0.0.1:<port>`. */
  readonly tlsUrl: string;
  /** Its two listeners, closed by the service's stop together with the api role's; nothing else of it needs stopping. */
  readonly servers: readonly (http.Server | https.Server)[];
  /** Builds the ingestion API and serves it from now on, on both ports. */
  open(deps: IngestionOpenDeps): Promise<void>;
}

/** Opens INGESTION_PORT and INGESTION_TLS_PORT, answering "starting" until `open`. */
export async function listenIngestion(deps: { config: Config; log: Logger; starting: StartingState }): Promise<IngestionRole> {
  const { config, log } = deps;
  // One gate for both ports: they serve one app.
  const gate = new StartingGate(startingIngestionApp(deps.starting, log.child({ role: 'ingestion' })).callback());
  const text = (_status: number, message: string) => ({ type: 'text/plain; charset=utf-8', body: message });
  const servers: (http.Server | https.Server)[] = [];
  let url: string;
  let tlsUrl: string;
  try {
    const plain = http.createServer(gate.listener);
    answerClientErrors(plain, log, text);
    servers.push(plain);
    url = localUrl('http', await listen(plain, config.ingestionPort, config.host, log));
    const secure = https.createServer(await tlsCredentials(config, log), gate.listener);
    answerClientErrors(secure, log, text);
    servers.push(secure);
    tlsUrl = localUrl('https', await listen(secure, config.ingestionTlsPort, config.host, log));
  } catch (error) {
    // The plain port may be open when the TLS one fails (taken, a bad certificate).
    await closeServers(servers, config.shutdownGraceMs, log);
    throw error;
  }
  return {
    url,
    tlsUrl,
    servers,
    async open({ stores, sync, health, apiKeyUsage, sampleParser }) {
      // Uploads that were being received when the process stopped were never acknowledged.
      const incoming = await incomingFolder(config.dataDir);
      const app = createIngestionApp({
        parser: sampleParser(),
        apiKeyUsage,
        events: stores.events,
        keys: stores.keys,
        blobs: stores.blobs,
        ids: new IdAllocator(stores.events),
        apiKeys: new ApiKeyQueries(stores.readStore),
        projects: new ProjectQueries(stores.readStore),
        samples: new SampleQueries(stores.readStore),
        sync,
        health,
        settleTimeoutMs: config.settleTimeoutMs,
        uploadIdleTimeoutMs: config.uploadIdleTimeoutMs,
        tmpDir: incoming,
        log: log.child({ role: 'ingestion' }),
      });
      gate.open(app.callback());
    },
  };
}
