import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { SmtpPeer } from '../support/smtp-peer.js';
import { buildTestApp, uniqueEmail, type TestApp } from '../support/test-app.js';
import { generateOpenApiDocument } from '../support/openapi-document.js';
import { compileClient, runClient } from '../support/client-types.js';
import { ERROR_CATALOG } from '../../src/errors/catalog.js';

/**
 * The committed OpenAPI document is what the routes produce, and a client generated from it
 * (openapi-typescript + openapi-fetch) compiles and works against a listening server.
 */
const root = path.resolve(import.meta.dirname, '../..');
const bin = (name: string) => path.join(root, 'node_modules/.bin', name);
let work: string;
let smtp: SmtpPeer;
let t: TestApp;
let baseUrl: string;

beforeAll(async () => {
  work = path.join(root, 'test/client/.generated');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  smtp = new SmtpPeer();
  const smtpUrl = await smtp.start();
  t = await buildTestApp({ REDIS_URL: inject('redisUrl'), SMTP_URL: smtpUrl, API_KEY_PEPPER: 'client-test-pepper-0123' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await t?.app.close();
  await smtp?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('OpenAPI document', () => {
  it('is committed exactly as the routes generate it (run npm run openapi:generate)', async () => {
    const committed = readFileSync(path.join(root, 'openapi/openapi.json'), 'utf8');
    expect(committed).toBe(await generateOpenApiDocument());
  });

  it('is served at /openapi.json; every operation has an id, a tag, one example per error status naming its codes, and its headers', async () => {
    type Media = { schema?: { $ref?: string; allOf?: [{ $ref?: string }, { properties: { code: { enum: string[] } } }]; format?: string }; example?: { code?: string; status?: number } };
    type Response = { description: string; headers?: Record<string, unknown>; content?: Record<string, Media> };
    const res = await fetch(`${baseUrl}/openapi.json`);
    const doc = (await res.json()) as { paths: Record<string, Record<string, { operationId?: string; tags?: string[]; security?: unknown[]; responses: Record<string, Response> }>> };
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const where = `${method} ${p}`;
        expect(op.operationId, where).toBeTruthy();
        expect(op.tags?.length, where).toBeGreaterThan(0);
        const keyed = !(Array.isArray(op.security) && op.security.length === 0) && !['/', '/v1/health', '/v1/health/ready'].includes(p);
        for (const [status, r] of Object.entries(op.responses)) {
          expect(r.description, `${where} ${status}`).not.toBe('Default Response');
          const headers = Object.keys(r.headers ?? {});
          expect(headers, `${where} ${status}`).toContain('X-Request-Id');
          if (keyed && p !== '/metrics') expect(headers, `${where} ${status}`).toEqual(expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']));
          if (status === '429' || status === '503') expect(headers, `${where} ${status}`).toContain('Retry-After');
          const binary = Object.values(r.content ?? {}).some((m) => m.schema?.format === 'binary');
          if (status === '200' && binary) expect(headers, where).toEqual(expect.arrayContaining(['Content-Disposition', 'X-Docproc-Warnings']));
          // Readiness answers 503 with its own report (for load balancers), not a problem.
          if (Number(status) < 400 || (p === '/v1/health/ready' && status === '503')) continue;
          const media = r.content?.['application/problem+json'];
          expect(media?.schema?.allOf?.[0].$ref, `${where} ${status}`).toBe('#/components/schemas/Problem');
          const codes = media!.schema!.allOf![1].properties.code.enum;
          expect(codes.length, `${where} ${status}`).toBeGreaterThan(0);
          for (const code of codes) expect(ERROR_CATALOG[code as keyof typeof ERROR_CATALOG].statuses, `${where}: ${code} with ${status}`).toContain(Number(status));
          expect(media!.example, `${where} ${status}`).toMatchObject({ status: Number(status), code: codes[0] });
          for (const code of codes) expect(r.description, `${where} ${status}`).toContain(`\`${code}\``);
        }
      }
    }
    const verify = doc.paths['/v1/verify']!.post!.responses['200']!;
    expect(verify.description).toMatch(/^The verification report/);
    expect(Object.keys(verify.headers ?? {})).toContain('X-Docproc-Warnings');
    // Both body forms of annotate, sign and verify are also separate operations (one body each).
    for (const name of ['annotate', 'sign', 'verify']) {
      const twin = doc.paths[`/v1/${name}/multipart`]!.post! as unknown as { operationId: string; requestBody: { content: Record<string, unknown> } };
      expect(twin.operationId).toBe(`${name}Multipart`);
      expect(Object.keys(twin.requestBody.content)).toEqual(['multipart/form-data']);
    }
  });
});

describe('generated TypeScript client', () => {
  it('compiles and runs register → verify → health against a listening server', async () => {
    execFileSync(bin('openapi-typescript'), [path.join(root, 'openapi/openapi.json'), '-o', path.join(work, 'schema.d.ts')], { stdio: 'pipe' });
    const email = uniqueEmail('client');
    const program = `
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

const client = createClient<paths>({ baseUrl: process.argv[2] });
const email = process.argv[3];
const reg = await client.GET('/v1/auth/register', { params: { query: { email } } });
if (reg.data !== 'Check your email for verification code.') throw new Error('register: ' + JSON.stringify(reg.error));
const code: string = await new Promise((resolve) => process.stdin.once('data', (d) => resolve(String(d).trim())));
const ver = await client.GET('/v1/auth/verify', { params: { query: { email, code } } });
const key: string | undefined = ver.data;
if (!key?.startsWith('dps_')) throw new Error('verify: ' + JSON.stringify(ver.error));
const health = await client.GET('/v1/health');
if (health.data?.status !== 'healthy') throw new Error('health');
const bad = await client.GET('/v1/verify/key', { headers: { authorization: 'Bearer dps_nope' } });
const problem = bad.error as { code?: string } | undefined;
console.log(JSON.stringify({ key, health: health.data.status, problem: problem?.code }));
`;
    compileClient(work, program);
    const run = await runClient(work, [baseUrl, email], smtp.codeFor(email, 15_000));
    expect(run.exit, run.stderr).toBe(0);
    const result = run.result as { key: string; health: string; problem: string };
    expect(result.key).toMatch(/^dps_/);
    expect(result.health).toBe('healthy');
    expect(result.problem).toBe('AUTHENTICATION_ERROR');
  });
});
