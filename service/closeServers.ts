// The end of a stop: the listeners stop accepting, requests in progress get a bounded time to
// finish, then every connection left is cut. Node enforces no request timeout once `close()` is
// called, so without a deadline one stalled upload kept the process from ever exiting. A request cut
// so was never answered: an upload is acknowledged only once it is durable (ingestion/ingestionApp.ts).
import type http from 'node:http';
import type https from 'node:https';
import type { Logger } from 'pino';

export async function closeServers(servers: readonly (http.Server | https.Server)[], graceMs: number, log: Logger): Promise<void> {
  const closed = Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  // Keep-alive connections between requests would otherwise wait for their own timeout.
  for (const s of servers) s.closeIdleConnections();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'deadline'>((resolve) => (timer = setTimeout(() => resolve('deadline'), graceMs)));
  const outcome = await Promise.race([closed.then(() => 'drained' as const), deadline]);
  clearTimeout(timer);
  if (outcome === 'deadline') {
    log.warn({ graceMs }, 'requests still in progress at the end of the shutdown grace were cut (none of them was acknowledged)');
    for (const s of servers) s.closeAllConnections();
    await closed;
  }
}
