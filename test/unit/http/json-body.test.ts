import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { InflightBodyBudget } from '../../../src/http/inflight-bodies.js';
import { LARGE_JSON_BYTES } from '../../../src/http/json-body.js';
import PizZip from 'pizzip';
import { issueTestKey } from '../../support/api-key.js';
import { buildDocx, para } from '../../support/annotate/docx-builder.js';
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

describe('annotate data in a large JSON body', () => {
  // On annotate a large body's `data` reaches the worker as its JSON text (rawJsonKeys), never as
  // a value the event loop copies: the document must come out exactly as from a small body.
  const template = buildDocx({ body: para('{name} {city}') + para('{#rows}[{v}]{/rows}') + para('{#nested.on}yes {nested.deep.word}{/nested.on}') });
  const fill = async (data: unknown) => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/annotate',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ document: { base64: template.toString('base64') }, fields: [], data }),
    });
    const body = res.json() as { document?: { base64: string }; code?: string };
    const text = body.document ? new PizZip(Buffer.from(body.document.base64, 'base64')).file('word/document.xml')!.asText().replace(/<[^>]+>/g, '') : '';
    return { status: res.statusCode, code: body.code, text };
  };
  const data = { name: 'Ada “Lovelace” 😀', city: 'Zürich', rows: [{ v: 1.5 }, { v: -0 }, { v: 'x\\y' }], nested: { on: true, deep: { word: 'ünïcode' } } };

  it('fills the template from a large body as from a small one', async () => {
    const small = await fill(data);
    const large = await fill({ ...data, pad: 'A'.repeat(LARGE_JSON_BYTES) });
    expect(small.status).toBe(200);
    expect(small.text).toContain('Ada “Lovelace” 😀 Zürich');
    expect(small.text).toContain('[1.5][0][x\\y]');
    expect(small.text).toContain('yes ünïcode');
    expect(large).toEqual(small);
  });

  it('still checks a large body\'s data: not an object is 400 naming it, as in a small body', async () => {
    for (const bad of [['a', 'b'], 'text']) {
      for (const base64 of [template.toString('base64'), 'A'.repeat(LARGE_JSON_BYTES)]) {
        const res = await app.inject({
          method: 'POST',
          url: '/v1/annotate',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ document: { base64 }, fields: [], data: bad }),
        });
        expect(res.statusCode, `${base64.length} bytes`).toBe(400);
        expect((res.json() as { detail: string }).detail).toMatch(/data/);
      }
    }
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
