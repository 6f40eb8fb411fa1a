import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';

/** An answer with the socket it came on: tests of kept-alive connections compare sockets. */
export interface KeptAliveAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  socket: Socket;
}

/** One request through `agent` (http or https by the URL; a self-signed certificate is accepted). */
export function keepAliveCall(agent: http.Agent, url: string, method = 'GET', body?: string | Buffer, headers: Record<string, string> = {}): Promise<KeptAliveAnswer> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(target, { method, agent, headers: { ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) }, rejectUnauthorized: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, socket: res.socket }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
