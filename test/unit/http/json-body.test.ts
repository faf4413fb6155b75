import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { InflightBodyBudget } from '../../../src/http/inflight-bodies.js';
import { LARGE_JSON_BYTES } from '../../../src/http/json-body.js';
import { issueTestKey } from '../../support/api-key.js';
import { buildTestApp } from '../../support/test-app.js';

/**
 * Bodies past LARGE_JSON_BYTES are parsed on the parser thread: they must be refused and accepted
 * exactly as Fastify's own parser does for small ones (syntax, prototype poisoning, nesting).
 */
let app: FastifyInstance;
let key: string;
beforeAll(async () => {
  ({ app } = await buildTestApp({ MAX_INFLIGHT_BODY_MB: '512' }));
  key = await issueTestKey(app);
});
afterAll(async () => {
  await app?.close();
});

const padding = 'x'.repeat(LARGE_JSON_BYTES);
async function send(payload: string) {
  const res = await app.inject({ method: 'POST', url: '/v1/verify', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload });
  return { status: res.statusCode, body: res.json() as { code: string; detail: string } };
}

describe('JSON bodies on the parser thread', () => {
  for (const [name, small] of [
    ['broken JSON', '{"document": {"base64": "'],
    ['__proto__ key', '{"__proto__": {"admin": true}, "document": {"base64": "'],
    ['constructor.prototype', '{"constructor": {"prototype": {"admin": true}}, "document": {"base64": "'],
  ] as const) {
    it(`refuses ${name} with 400, small or large`, async () => {
      const tail = name === 'broken JSON' ? '' : '"}}';
      for (const payload of [`${small}AAAA${tail}`, `${small}${padding}${tail}`]) {
        const answer = await send(payload);
        expect(answer.status, `${payload.length} bytes`).toBe(400);
        expect(answer.body.code).toBe('VALIDATION_ERROR');
      }
    });
  }

  it('refuses nesting past 64 levels with 400 without cloning the value', async () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const answer = await send(`{"document": {"base64": "${padding}"}, "deep": ${deep}}`);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('VALIDATION_ERROR');
  });

  it('hands a large valid body to the route as Fastify would (here: the route checks its fields)', async () => {
    const answer = await send(`{"document": {"base64": "${padding}"}, "undeclared": 1}`);
    expect(answer.status).toBe(400);
    expect(answer.body.detail).toMatch(/undeclared|additional/);
  });
});

describe('in-flight body budget', () => {
  it('admits up to the budget, half of it per key, always one request when nothing is in flight, and gives back what it took', () => {
    const budget = new InflightBodyBudget(100);
    expect(budget.tryReserve('a', 40)).toBe(true);
    expect(budget.tryReserve('a', 20)).toBe(false); // the key would hold 60 > 50
    expect(budget.tryReserve('b', 40)).toBe(true);
    expect(budget.tryReserve('c', 30)).toBe(false); // the replica would hold 110 > 100
    expect(budget.tryReserve('c', 20)).toBe(true);
    budget.release('a', 40);
    budget.release('b', 40);
    budget.release('c', 20);
    expect(budget.bytesInFlight).toBe(0);
    expect(budget.tryReserve('d', 500)).toBe(true); // alone, larger than the budget: admitted
    expect(budget.tryReserve('e', 1)).toBe(false);
    budget.release('d', 500);
    expect(budget.tryReserve('e', 1)).toBe(true);
  });
});
