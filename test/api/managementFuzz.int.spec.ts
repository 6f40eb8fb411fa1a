import http from 'node:http';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, registerUser, startTestService, type TestService } from '../support/testService';

// Every path and method of the OpenAPI document the service serves, called as a signed-in user
// (JWT) and with the project's admin API key, with hostile path parameters, query strings and
// bodies; then unknown paths and methods. Bad input is the client's fault: never a 5xx, every
// failure is the JSON envelope `{ success: false, error }`, and no answer shows a stack.

interface Answer {
  status: number;
  type: string;
  text: string;
}

interface Sent {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

interface Operation {
  method: string;
  /** `/api/{projectId}/...`, relative to `/v1`. */
  path: string;
  params: string[];
  query: string[];
  bodyFields: string[];
}

/** Values for path parameters, already percent-encoded where a URL needs it. */
const HOSTILE_SEGMENTS = [
  '-1',
  '0',
  '1e999',
  '9007199254740993',
  '1.5',
  '0x1f',
  '+1',
  'abc',
  '%00',
  '%25',
  '%E0%A4%A',
  '%F0%9F%92%A9',
  encodeURIComponent('ünïcödé\u202e\u0000'),
  '..%2F..%2Fetc%2Fpasswd',
  '__proto__',
  'constructor',
  'null',
  'x'.repeat(4000),
];

const HOSTILE_VALUES: unknown[] = [
  null,
  true,
  -1,
  0,
  1e308,
  -1e308,
  9007199254740993,
  0.1,
  'NaN',
  'Infinity',
  '-Infinity',
  '1e999',
  '',
  'a\u0000b',
  '\u202e\u0007',
  'x'.repeat(200_000),
  [],
  [1, 'a', null],
  {},
  JSON.parse('{"__proto__":{"polluted":true}}'),
  { constructor: { prototype: { polluted: true } } },
];

/** A value nested `depth` levels deep, as JSON text (JSON.stringify itself would recurse that deep). */
const nested = (depth: number, open: string, close: string, inner = '1') => `${open.repeat(depth)}${inner}${close.repeat(depth)}`;

/** Bodies with the headers that go with them; none of them is a valid request. */
const HOSTILE_BODIES: { name: string; headers: Record<string, string>; body: Buffer | string }[] = [
  { name: 'invalid JSON', headers: { 'content-type': 'application/json' }, body: '{"a":' },
  { name: 'truncated JSON', headers: { 'content-type': 'application/json' }, body: '{"projectName":"x"' },
  { name: 'not JSON at all', headers: { 'content-type': 'application/json' }, body: 'nul' },
  { name: 'empty JSON body', headers: { 'content-type': 'application/json' }, body: '' },
  { name: 'a JSON array', headers: { 'content-type': 'application/json' }, body: '[{"a":1}]' },
  { name: 'a JSON string', headers: { 'content-type': 'application/json' }, body: '"text"' },
  { name: 'a JSON number', headers: { 'content-type': 'application/json' }, body: '1e999' },
  { name: 'JSON null', headers: { 'content-type': 'application/json' }, body: 'null' },
  { name: 'deeply nested objects', headers: { 'content-type': 'application/json' }, body: nested(50_000, '{"a":', '}') },
  { name: 'deeply nested arrays', headers: { 'content-type': 'application/json' }, body: nested(200_000, '[', ']') },
  { name: 'huge numbers', headers: { 'content-type': 'application/json' }, body: '{"a":1e999,"b":-1e999,"c":9007199254740993,"d":123456789012345678901234567890}' },
  { name: 'prototype keys', headers: { 'content-type': 'application/json' }, body: '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}' },
  { name: 'JSON over 1 MB', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ a: 'x'.repeat(1_100_000) }) },
  { name: 'bad charset', headers: { 'content-type': 'application/json; charset=bogus-8' }, body: '{}' },
  { name: 'UTF-16 charset', headers: { 'content-type': 'application/json; charset=utf-16' }, body: '{}' },
  { name: 'gzip that is not gzip', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: '{"a":1}' },
  { name: 'gzip of invalid JSON', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync('{"a":') },
  { name: 'unknown encoding', headers: { 'content-type': 'application/json', 'content-encoding': 'x-bogus' }, body: '{}' },
  { name: 'invalid UTF-8', headers: { 'content-type': 'application/json' }, body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0xff, 0x22, 0x7d]) },
  { name: 'text/plain', headers: { 'content-type': 'text/plain' }, body: 'hello' },
  { name: 'a form', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&__proto__[polluted]=1' },
  { name: 'XML', headers: { 'content-type': 'application/xml' }, body: '<a/>' },
  { name: 'no content type', headers: {}, body: '{"a":1}' },
  { name: 'multipart without boundary', headers: { 'content-type': 'multipart/form-data' }, body: 'x' },
  { name: 'malformed multipart', headers: { 'content-type': 'multipart/form-data; boundary=zz' }, body: '--zz\r\nContent-Disposition: form-data; name="photo"; filename="a.png"\r\n\r\nabc' },
  { name: 'multipart with a text field', headers: { 'content-type': 'multipart/form-data; boundary=zz' }, body: '--zz\r\nContent-Disposition: form-data; name="__proto__"\r\n\r\nx\r\n--zz--\r\n' },
];

/** Query strings: repeated keys, prototype keys, broken escapes, huge and odd numbers. */
const hostileQueries = (names: string[]): string[] => {
  const each = (value: string) => names.map((n) => `${n}=${value}`).join('&');
  return [
    ...['-1', '1e999', '9007199254740993', 'NaN', '%00', '%E0%A4%A', 'x'.repeat(3000), 'true', '[]', '{}'].map(each),
    names.map((n) => `${n}=1&${n}=2`).join('&'),
    names.map((n) => `${n}[]=1&${n}[a]=2`).join('&'),
    '__proto__[polluted]=1&constructor[prototype][polluted]=1',
    '%=%&&=&a',
  ].filter((q) => q.length > 0);
};

function send(port: number, request: Sent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = request.body === undefined ? undefined : Buffer.isBuffer(request.body) ? request.body : Buffer.from(request.body);
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: request.method,
        path: `/v1${request.path}`,
        headers: { ...request.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.setTimeout(20_000, () => req.destroy(new Error('no answer in 20 s')));
    req.on('error', reject);
    req.end(body);
  });
}

/** What is wrong with an answer, or undefined. */
function problemWith(request: Sent, answer: Answer): string | undefined {
  if (answer.status >= 500) return `${answer.status}`;
  if (/\n\s+at |node_modules|\.[cm]?[jt]s:\d+:\d+/.test(answer.text)) return 'shows a stack or source location';
  if (answer.status < 400 || request.method === 'HEAD') return undefined;
  if (!answer.type.startsWith('application/json')) return `an error as ${answer.type || 'no content type'}`;
  try {
    const body = JSON.parse(answer.text) as { success?: unknown; error?: unknown };
    if (body.success !== false || typeof body.error !== 'string' || body.error.length === 0) return 'an error without { success: false, error }';
  } catch {
    return 'an error that is not JSON';
  }
  return undefined;
}

const describeRequest = (r: Sent) => `${r.method} ${r.path.length > 120 ? `${r.path.slice(0, 120)}…` : r.path}${r.headers?.['content-type'] ? ` (${r.headers['content-type']})` : ''}`;

describe('the management API under hostile input', () => {
  let service: TestService;
  let port: number;
  let operations: Operation[];
  const auth: Record<'jwt' | 'apiKey', Record<string, string>> = { jwt: {}, apiKey: {} };
  /** The ids that exist, so that a request gets past the lookups to its validation. */
  const real: Record<string, string> = {};
  const problems: string[] = [];
  let requests = 0;
  const statuses = new Map<number, number>();

  const check = async (request: Sent) => {
    requests++;
    let answer: Answer;
    try {
      answer = await send(port, request);
    } catch (error) {
      problems.push(`${describeRequest(request)}: ${String(error)}`);
      return;
    }
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    const problem = problemWith(request, answer);
    if (problem) problems.push(`${describeRequest(request)}: ${problem}: ${answer.text.slice(0, 300)}`);
  };

  beforeAll(async () => {
    service = await startTestService({ mongo: false });
    port = Number(new URL(service.apiUrl).port);
    const { id, token } = await registerUser(service);
    const project = await call(service, 'POST', '/api/projects/create', { headers: { 'x-jwt-token': token }, body: { projectName: 'Fuzz' } });
    expect(project.status).toBe(200);
    auth.jwt = { 'x-jwt-token': token };
    auth.apiKey = { 'x-api-key': String(project.body.apiKey) };
    real.projectId = String(project.body.id);
    real.userId = String(id);
    const doc = (await call(service, 'GET', '/openapi.json')).body as { paths: Record<string, Record<string, { parameters: { name: string; in: string }[]; requestBody?: { content: Record<string, { schema?: { properties?: Record<string, unknown> } }> } }>> };
    operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        params: op.parameters.filter((p) => p.in === 'path').map((p) => p.name),
        query: op.parameters.filter((p) => p.in === 'query').map((p) => p.name),
        bodyFields: Object.keys(op.requestBody?.content['application/json']?.schema?.properties ?? {}),
      })),
    );
  });
  afterAll(async () => {
    await service?.destroy();
  });
  beforeEach(() => {
    problems.length = 0;
  });

  /** The path with each parameter set: the given value, else the real id when there is one, else 1. */
  const pathOf = (op: Operation, values: Record<string, string> = {}) => op.path.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? real[name] ?? '1');
  /** Deleting the fixture project would leave every later request a 401 or 404. */
  const spares = (op: Operation) => !(op.method === 'DELETE' && op.path === '/api/{projectId}');

  it('walks every operation of the OpenAPI document', () => {
    expect(operations.length).toBeGreaterThan(50);
    expect(operations.some((op) => op.method === 'POST' && op.path === '/api/{projectId}/apikeys')).toBe(true);
  });

  it('answers hostile path parameters with a 4xx envelope, never a 5xx', async () => {
    for (const op of operations) {
      for (const name of op.params) {
        for (const value of HOSTILE_SEGMENTS) {
          for (const who of ['jwt', 'apiKey'] as const) await check({ method: op.method, path: pathOf(op, { [name]: value }), headers: { ...auth[who], 'content-type': 'application/json' }, body: '{}' });
        }
      }
    }
    expect(problems).toEqual([]);
  }, 120_000);

  it('answers hostile query strings with a 4xx envelope, never a 5xx', async () => {
    for (const op of operations.filter(spares)) {
      for (const query of hostileQueries([...op.query, 'limit', 'offset'])) {
        await check({ method: op.method, path: `${pathOf(op)}?${query}`, headers: { ...auth.jwt, 'content-type': 'application/json' }, body: op.method === 'GET' ? undefined : '{}' });
      }
    }
    expect(problems).toEqual([]);
  }, 120_000);

  it('answers hostile bodies with a 4xx envelope, never a 5xx', async () => {
    for (const op of operations.filter((o) => o.method !== 'GET' && spares(o))) {
      for (const { headers, body } of HOSTILE_BODIES) {
        // The large bodies cost time to send: once per operation is enough for them.
        for (const who of body.length > 100_000 ? (['jwt'] as const) : (['jwt', 'apiKey'] as const)) await check({ method: op.method, path: pathOf(op), headers: { ...auth[who], ...headers }, body });
      }
    }
    expect(problems).toEqual([]);
  }, 120_000);

  it("answers generated values in each operation's own body fields without a 5xx", async () => {
    const hostileValue = fc.oneof(fc.constantFrom(...HOSTILE_VALUES), fc.jsonValue({ maxDepth: 3 }), fc.string({ unit: 'binary', maxLength: 64 }));
    for (const op of operations.filter((o) => o.method !== 'GET' && o.bodyFields.length > 0 && spares(o))) {
      await fc.assert(
        fc.asyncProperty(fc.dictionary(fc.constantFrom(...op.bodyFields, '__proto__', 'constructor'), hostileValue, { maxKeys: op.bodyFields.length + 2 }), fc.constantFrom('jwt', 'apiKey' as const), async (fields, who) => {
          const before = problems.length;
          await check({ method: op.method, path: pathOf(op), headers: { ...auth[who], 'content-type': 'application/json' }, body: JSON.stringify(fields) });
          expect(problems.slice(before)).toEqual([]);
        }),
        { numRuns: 25 },
      );
    }
    expect(problems).toEqual([]);
  }, 180_000);

  it('answers unknown paths and methods with a 4xx envelope', async () => {
    for (const op of operations) {
      for (const method of ['PATCH', 'PUT', 'OPTIONS', 'TRACE', 'HEAD', 'PROPFIND', 'M-SEARCH']) {
        await check({ method, path: pathOf(op), headers: auth.jwt });
      }
    }
    for (const path of ['/nope', '/api', '/api/', '/api/1/nope', '/api/user/photo/extra', '/%00', '/%E0%A4%A', `/${'x'.repeat(4000)}`, '/openapi.json/..', '/user-photos/%00', '/user-photos/abc']) {
      for (const method of ['GET', 'POST', 'DELETE', 'PATCH', 'TRACE']) await check({ method, path, headers: auth.jwt });
    }
    expect(problems).toEqual([]);
  }, 120_000);

  it("answers requests Node's HTTP parser refuses in the envelope too", async () => {
    const raw = (bytes: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.end(bytes));
        const chunks: Buffer[] = [];
        socket.on('data', (c: Buffer) => chunks.push(c));
        socket.on('close', () => resolve(Buffer.concat(chunks).toString()));
        socket.on('error', reject);
      });
    const cases: [string, number][] = [
      ['GET /v1/api/user HTTP/1.1\r\nHost: a\r\nNot a header\r\n\r\n', 400],
      ['GET /v1/api/user HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab', 400],
      ['BOGUS\r\n\r\n', 400],
      [`GET /v1/api/user HTTP/1.1\r\nHost: a\r\nx-big: ${'x'.repeat(20_000)}\r\n\r\n`, 431],
    ];
    for (const [request, status] of cases) {
      const answer = await raw(request);
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      expect(head, request.slice(0, 60)).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(head).toMatch(/content-type: application\/json/i);
      expect(JSON.parse(body)).toEqual({ success: false, error: expect.any(String) });
    }
  });

  it('leaves no polluted prototype behind and still serves the fixture', async () => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect((await call(service, 'GET', `/api/${real.projectId}`, { headers: auth.jwt })).status).toBe(200);
    const counts = [...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}: ${n}`);
    console.log(`management API fuzz: ${operations.length} operations, ${requests} requests; answers ${counts.join(', ')}`);
    // The hostile requests reached validation and the handlers, not only the authentication.
    expect(statuses.get(400) ?? 0).toBeGreaterThan(requests / 4);
  });
});
