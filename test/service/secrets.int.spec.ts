// The secrets the service prepares at start (service/secrets.ts): taken from the configuration when
// set, else made once in the data folder, owner-only, and the same on every later start.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jwtSecret, tlsCredentials } from '../../service/secrets';

const log = pino({ level: 'silent' });
let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'edge-ml-secrets-'));
});
afterEach(() => rm(dataDir, { recursive: true, force: true }));

describe('the JWT secret', () => {
  it('is JWT_SECRET when set, and then nothing is written', async () => {
    expect(await jwtSecret({ jwtSecret: 'configured'.padEnd(32, '!'), dataDir })).toBe('configured'.padEnd(32, '!'));
    await expect(stat(path.join(dataDir, 'jwt-secret'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('is, without JWT_SECRET, made once in the data folder, readable by its owner only, and the same for every process', async () => {
    const [a, b] = await Promise.all([jwtSecret({ jwtSecret: undefined, dataDir }), jwtSecret({ jwtSecret: undefined, dataDir })]);
    expect(a).toMatch(/^[\w-]{64}$/);
    expect(b).toBe(a);
    expect(await jwtSecret({ jwtSecret: undefined, dataDir })).toBe(a);
    expect((await stat(path.join(dataDir, 'jwt-secret'))).mode & 0o777).toBe(0o600);
  });
});

describe('the ingestion TLS certificate', () => {
  it('is, without TLS_CERT_FILE and TLS_KEY_FILE, self-signed for localhost once, its key owner-only, and kept for later starts', async () => {
    const config = { tlsCertFile: undefined, tlsKeyFile: undefined, dataDir };
    const first = await tlsCredentials(config, log);
    const cert = new X509Certificate(first.cert);
    expect(cert.subject).toContain('CN=localhost');
    expect(cert.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(cert.checkPrivateKey(createPrivateKey(first.key))).toBe(true);
    expect((await stat(path.join(dataDir, 'tls', 'key.pem'))).mode & 0o777).toBe(0o600);
    expect(await tlsCredentials(config, log)).toEqual(first);
  });

  it('is TLS_CERT_FILE and TLS_KEY_FILE when set, and then nothing is made', async () => {
    const made = await tlsCredentials({ tlsCertFile: undefined, tlsKeyFile: undefined, dataDir: path.join(dataDir, 'elsewhere') }, log);
    await writeFile(path.join(dataDir, 'c.pem'), made.cert);
    await writeFile(path.join(dataDir, 'k.pem'), made.key);
    const configured = await tlsCredentials({ tlsCertFile: path.join(dataDir, 'c.pem'), tlsKeyFile: path.join(dataDir, 'k.pem'), dataDir }, log);
    expect(configured).toEqual({ cert: await readFile(path.join(dataDir, 'c.pem'), 'utf8'), key: made.key });
    await expect(stat(path.join(dataDir, 'tls'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
