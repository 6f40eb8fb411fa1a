// The secrets the service prepares at start (service/secrets.ts): taken from the configuration when
// set, else made once in the data folder, owner-only, and the same on every later start.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOnce, jwtSecret, oauthServerKeys, tlsCredentials } from '../../service/secrets';

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

  it('is never used short: an empty or cut file (a crash of an older version mid-write) stops the start, naming the file', async () => {
    for (const content of ['', 'abc\n']) {
      await writeFile(path.join(dataDir, 'jwt-secret'), content);
      await expect(jwtSecret({ jwtSecret: undefined, dataDir })).rejects.toThrow(`${path.join(dataDir, 'jwt-secret')} holds no usable secret`);
    }
  });

  it('is made under a name of its own and linked into place: many makers agree, and no temporary file stays', async () => {
    await writeFile(path.join(dataDir, 'jwt-secret.999.stray.tmp'), 'left by a crash');
    const secrets = await Promise.all(Array.from({ length: 20 }, () => jwtSecret({ jwtSecret: undefined, dataDir })));
    expect(new Set(secrets).size).toBe(1);
    expect(secrets[0]).toMatch(/^[\w-]{64}$/);
    expect((await readdir(dataDir)).sort()).toEqual(['jwt-secret', 'jwt-secret.999.stray.tmp']);
  });
});

describe('a file made once', () => {
  it('is still made, whole and owner-only, on a filesystem without hard links, and a second maker keeps the first', async () => {
    const noLinks = () => Promise.reject(Object.assign(new Error('operation not permitted'), { code: 'EPERM' }));
    const file = path.join(dataDir, 'made-once');
    await createOnce(file, 'first', noLinks);
    await createOnce(file, 'second', noLinks);
    expect(await readFile(file, 'utf8')).toBe('first');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(dataDir)).toEqual(['made-once']);
  });

  it('passes on errors other than a missing link feature', async () => {
    const broken = () => Promise.reject(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
    await expect(createOnce(path.join(dataDir, 'made-once'), 'x', broken)).rejects.toThrow('no space left on device');
    expect(await readdir(dataDir)).toEqual([]);
  });
});

describe('the OAuth signing key', () => {
  it('is made once, owner-only, the same for every maker, and a cut or foreign file stops the start naming it', async () => {
    const keys = await Promise.all(Array.from({ length: 5 }, () => oauthServerKeys({ jwtSecret: undefined, dataDir })));
    expect(new Set(keys.map((k) => k.signingKey.kid)).size).toBe(1);
    expect(keys[0]!.signingKey).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', d: expect.any(String) });
    const file = path.join(dataDir, 'oauth-signing-key.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readdir(dataDir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    const whole = await readFile(file, 'utf8');
    for (const content of [whole.slice(0, 100), '', JSON.stringify({ kty: 'RSA', n: 'x', e: 'AQAB' })]) {
      await writeFile(file, content);
      await expect(oauthServerKeys({ jwtSecret: undefined, dataDir })).rejects.toThrow(`${file} holds no usable signing key`);
    }
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
