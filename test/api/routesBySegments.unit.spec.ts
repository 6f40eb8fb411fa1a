import http from 'node:http';
import Router from '@koa/router';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allOperations, apiRouter } from '../../api/apiApp';
import type { ApiDeps } from '../../api/apiDeps';
import type { MountDeps } from '../../api/http/operation';
import { unknownMethod } from '../../http/clientErrors';
import { routersBySegments, routesBySegments, segmentCount } from '../../http/routesBySegments';

/** Deps nothing is asked of: the routes are only built and matched here, never called. */
const inert = new Proxy({}, { get: () => () => undefined }) as unknown as ApiDeps;
const api = apiRouter(inert, allOperations(inert), {} as MountDeps);

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND'];

/** Request paths around each route's: its parameters filled several ways, upper case, a slash too many or too few, a segment more or less. */
function pathsNear(pattern: string): string[] {
  const filled = ['2', 'abc', 'a%2Fb', 'x.y'].map((value) => pattern.replace(/:[A-Za-z_$][\w$]*/g, value));
  return filled.flatMap((p) => [p, `${p}/`, `${p}//`, p.toUpperCase(), `${p}/more`, p.replace(/\/[^/]*$/, ''), p.replace('/', '//'), `/x${p}`]);
}

describe('routesBySegments', () => {
  it('counts segments as a route of plain segments and parameters takes them, one trailing slash aside', () => {
    expect(segmentCount('/')).toBe(1);
    expect(segmentCount('/v1/api/2')).toBe(3);
    expect(segmentCount('/v1/api/2/')).toBe(3);
    expect(segmentCount('/v1/api/2//')).toBe(4);
    expect(segmentCount('/v1/api/a%2Fb')).toBe(3);
    expect(segmentCount('/v1//api')).toBe(3);
  });

  it("matches every request to the very routes the management API's router does, in the same order", () => {
    const buckets = routersBySegments(api);
    // Every route is in one bucket, and the buckets are much smaller than the router.
    expect([...buckets.values()].reduce((n, b) => n + b.stack.length, 0)).toBe(api.stack.length);
    expect(Math.max(...[...buckets.values()].map((b) => b.stack.length))).toBeLessThan(api.stack.length / 2);
    const paths = new Set(['/', '', '/v1', '/v1/', '/health', '/v1/api', ...api.stack.flatMap((layer) => pathsNear(String(layer.path)))]);
    let matched = 0;
    for (const path of paths) {
      for (const method of METHODS) {
        const whole = api.match(path, method);
        const bucket = buckets.get(segmentCount(path))?.match(path, method) ?? { path: [], pathAndMethod: [], route: false };
        expect(bucket.path, `${method} ${path}`).toEqual(whole.path);
        expect(bucket.pathAndMethod, `${method} ${path}`).toEqual(whole.pathAndMethod);
        expect(bucket.route, `${method} ${path}`).toBe(whole.route);
        if (whole.route) matched++;
      }
    }
    // The paths tried reach the routes, not only the misses.
    expect(matched).toBeGreaterThan(api.stack.length);
  });

  it('refuses a route that could match paths of another segment count', () => {
    const optional = new Router();
    optional.get('/files{/:name}', () => undefined);
    expect(() => routersBySegments(optional)).toThrow(/fixed segments/);
    const wildcard = new Router();
    wildcard.get('/files/*rest', () => undefined);
    expect(() => routersBySegments(wildcard)).toThrow(/fixed segments/);
    const middleware = new Router();
    middleware.use(() => undefined);
    expect(() => routersBySegments(middleware)).toThrow(/fixed segments/);
  });

  describe('over HTTP', () => {
    let server: http.Server;
    let base: string;
    beforeAll(async () => {
      const router = new Router({ prefix: '/v1' });
      router.get('/api/projects', (ctx) => void (ctx.body = 'projects'));
      router.get('/api/:projectId', (ctx) => void (ctx.body = `project ${ctx.params.projectId}`));
      router.post('/api/:projectId/devices', (ctx) => void (ctx.body = `devices of ${ctx.params.projectId}`));
      const app = new Koa();
      app.use(async (ctx, next) => {
        try {
          await next();
        } catch (error) {
          ctx.status = (error as { status?: number }).status ?? 500;
          ctx.body = (error as Error).message;
        }
      });
      app.use(routesBySegments(router, { throw: true, notImplemented: unknownMethod }));
      server = http.createServer(app.callback()).listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    });
    afterAll(() => new Promise((resolve) => server.close(resolve)));

    const call = async (method: string, path: string) => {
      const reply = await fetch(`${base}${path}`, { method });
      return [reply.status, await reply.text()];
    };

    it('answers routes first matched first, with their parameters, and the router\'s 404 and 405', async () => {
      expect(await call('GET', '/v1/api/projects')).toEqual([200, 'projects']);
      expect(await call('GET', '/v1/api/7/')).toEqual([200, 'project 7']);
      expect(await call('POST', '/v1/api/7/devices')).toEqual([200, 'devices of 7']);
      expect((await call('GET', '/v1/api/7/devices'))[0]).toBe(405);
      expect((await call('GET', '/v1/api/7/nothing'))[0]).toBe(404);
      expect((await call('GET', '/v1/nothing/at/all/here/really'))[0]).toBe(404);
      // A method no route takes is the router's 405 wherever it goes, matched or not.
      expect((await call('PROPFIND', '/v1/api/7'))[0]).toBe(405);
      expect((await call('PROPFIND', '/v1/nothing/at/all/here/really'))[0]).toBe(405);
    });
  });
});
