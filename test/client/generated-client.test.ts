import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { SmtpPeer } from '../support/smtp-peer.js';
import { buildTestApp, uniqueEmail, type TestApp } from '../support/test-app.js';
import { generateOpenApiDocument } from '../support/openapi-document.js';
import { compileClient, runClient } from '../support/client-types.js';

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

  it('is served at /openapi.json and every operation has an id, a tag and Problem errors', async () => {
    const res = await fetch(`${baseUrl}/openapi.json`);
    const doc = (await res.json()) as { paths: Record<string, Record<string, { operationId?: string; tags?: string[]; responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }> }>> };
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(op.operationId, `${method} ${p}`).toBeTruthy();
        expect(op.tags?.length, `${method} ${p}`).toBeGreaterThan(0);
        for (const [status, r] of Object.entries(op.responses)) {
          if (Number(status) >= 400 && r.content?.['application/problem+json']) {
            expect(r.content['application/problem+json'].schema?.$ref).toBe('#/components/schemas/Problem');
          }
        }
      }
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
