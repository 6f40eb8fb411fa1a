// One HTTP call with its whole answer as text: for the benches' setup and for the load generator,
// which imports this alone (not benchKit, which brings the service in) to stay a light process.
import http from 'node:http';

export interface Reply {
  status: number;
  text: string;
}

/** The answer's status and its body as text, once the body has ended. */
export function readReply(res: http.IncomingMessage): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    res.on('error', reject);
  });
}

export function request(agent: http.Agent, url: URL | string, method: string, headers: Record<string, string>, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      readReply(res).then(resolve, reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
