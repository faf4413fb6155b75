import { Worker } from 'node:worker_threads';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DEFAULT_BACKGROUND_NICE } from '../compute/background-priority.js';
import { validationError } from '../errors/domain-error.js';
import { MAX_JSON_DEPTH } from './json-depth.js';

/**
 * JSON bodies past LARGE_JSON_BYTES are parsed on a thread of their own, so ten 38 MB bodies do not
 * hold the event loop (health checks, every other request) for seconds: the raw bytes are moved to
 * the thread without a copy, decoded and parsed there, checked for nesting and prototype poisoning
 * as Fastify's own parser does, and the value comes back by structured clone (a copy of its
 * strings, several times cheaper than decoding and parsing them). Smaller bodies keep Fastify's
 * parser on the main thread (a thread round trip would cost more than they do).
 */
export const LARGE_JSON_BYTES = 1024 * 1024;

/** What the parser thread runs (plain JavaScript, evaluated: the same in development and in dist/). */
const PARSER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
// Below the event loop, as the worker threads (src/compute/background-priority.ts, lowerThisThread).
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  const os = require('node:os');
  if (workerData.nice > 0 && tid !== process.pid) os.setPriority(tid, Math.min(19, os.getPriority(tid) + workerData.nice));
} catch {}
const hasOwn = Object.prototype.hasOwnProperty;
// Nesting past maxDepth, or a key Fastify's parser refuses (__proto__; constructor holding prototype).
function inspect(value, maxDepth) {
  const pending = [[value, 0]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop();
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > maxDepth) return 'depth';
    if (!Array.isArray(current)) {
      if (hasOwn.call(current, '__proto__')) return 'proto';
      const ctor = current.constructor;
      if (hasOwn.call(current, 'constructor') && ctor !== null && typeof ctor === 'object' && hasOwn.call(ctor, 'prototype')) return 'proto';
    }
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
    }
  }
  return undefined;
}
// The object under each of rawKeys (a route's rawJsonKeys), as JSON text again, moved back
// separately: the event loop never copies it (no structured clone of its strings), the thread that
// uses it parses it. In the value it is an empty object.
function extract(value, rawKeys) {
  const raw = {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return raw;
  for (const key of rawKeys) {
    const part = hasOwn.call(value, key) ? value[key] : undefined;
    if (part === null || typeof part !== 'object' || Array.isArray(part)) continue;
    raw[key] = new TextEncoder().encode(JSON.stringify(part));
    value[key] = {};
  }
  return raw;
}
parentPort.on('message', ({ id, bytes, maxDepth, rawKeys }) => {
  let value;
  try {
    value = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch (err) {
    parentPort.postMessage({ id, problem: 'syntax', message: String(err && err.message) });
    return;
  }
  const problem = inspect(value, maxDepth);
  if (problem) {
    parentPort.postMessage({ id, problem });
    return;
  }
  const raw = extract(value, rawKeys);
  parentPort.postMessage({ id, value, raw }, Object.values(raw).map((part) => part.buffer));
});
`;

/** Heap of the parser thread: a 40 MB body as text (twice that when not ASCII), its value, and the clone's buffer. */
const PARSER_HEAP_MB = 384;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

type ParserReply = { id: number; value?: unknown; raw?: Record<string, Uint8Array>; problem?: 'syntax' | 'depth' | 'proto'; message?: string };

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Top-level keys of a large JSON body (≥ LARGE_JSON_BYTES) holding free-form objects the route
     * hands to a worker thread as they are (annotate's `data`): they reach the route as JSON bytes
     * (rawJsonOf), the body holding an empty object in their place (validated as such).
     */
    rawJsonKeys?: string[];
  }
}

const RAW_JSON = Symbol('rawJson');

/**
 * The JSON text of `body[key]` when a large body's parser kept it as bytes (rawJsonKeys), else
 * undefined (the value is in the body). A symbol-keyed property: schemas and serializers do not see it.
 */
export function rawJsonOf(body: unknown, key: string): Uint8Array | undefined {
  return (body as { [RAW_JSON]?: Record<string, Uint8Array> } | null)?.[RAW_JSON]?.[key];
}

export class JsonParserThread {
  private worker?: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  /** `nice`: steps below the event loop the thread parses at (BACKGROUND_NICE). */
  constructor(private readonly nice = DEFAULT_BACKGROUND_NICE) {}

  parse(bytes: Buffer, rawKeys: string[] = []): Promise<unknown> {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // Moved, not copied, when the buffer owns its memory (a body larger than the pool slab does).
      const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
      worker.postMessage({ id, bytes, maxDepth: MAX_JSON_DEPTH, rawKeys }, own ? [bytes.buffer as ArrayBuffer] : []);
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private start(): Worker {
    const worker = new Worker(PARSER_SOURCE, { eval: true, workerData: { nice: this.nice }, resourceLimits: { maxOldGenerationSizeMb: PARSER_HEAP_MB } });
    worker.unref();
    worker.on('message', (reply: ParserReply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if (reply.problem) waiter.reject(parseError(reply.problem, reply.message));
      else {
        const raw = reply.raw ?? {};
        if (Object.keys(raw).length > 0) Object.defineProperty(reply.value, RAW_JSON, { value: raw });
        waiter.resolve(reply.value);
      }
    });
    const fail = (err: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const waiter of this.pending.values()) waiter.reject(err);
      this.pending.clear();
    };
    worker.on('error', () => fail(Object.assign(new Error('The JSON body could not be parsed within the memory a body may use.'), { statusCode: 413, code: 'FST_ERR_CTP_BODY_TOO_LARGE' })));
    worker.on('exit', () => fail(new Error('the JSON parser thread stopped')));
    this.worker = worker;
    return worker;
  }
}

function parseError(problem: 'syntax' | 'depth' | 'proto', message = ''): Error {
  if (problem === 'syntax') return Object.assign(new SyntaxError(message), { statusCode: 400 });
  if (problem === 'proto') return Object.assign(new Error('Object contains forbidden prototype property'), { statusCode: 400, code: 'FST_PROTO_VIOLATION' });
  return validationError(`body is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects.`, [{ field: 'body', issue: `nesting deeper than ${MAX_JSON_DEPTH}` }]);
}

/**
 * The body's bytes, copied chunk by chunk as they arrive into one buffer of its declared length (a
 * chunked body grows one): Fastify's collection concatenates them at the end, ~0.1 s of the event
 * loop for 38 MB. Past `limit` bytes 413, a body shorter or longer than its Content-Length 400.
 */
function collectBody(request: FastifyRequest, payload: NodeJS.ReadableStream, limit: number): Promise<Buffer> {
  const declared = Number(request.headers['content-length']);
  const sized = Number.isSafeInteger(declared) && declared >= 0;
  return new Promise((resolve, reject) => {
    if (sized && declared > limit) {
      reject(Object.assign(new Error('Request body is too large'), { statusCode: 413, code: 'FST_ERR_CTP_BODY_TOO_LARGE' }));
      return;
    }
    let body = Buffer.allocUnsafe(sized ? declared : 64 * 1024);
    let received = 0;
    let settled = false;
    const fail = (err: Error) => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      if (!settled) reject(err);
      settled = true;
    };
    const onData = (chunk: Buffer) => {
      if (received + chunk.length > limit) return fail(Object.assign(new Error('Request body is too large'), { statusCode: 413, code: 'FST_ERR_CTP_BODY_TOO_LARGE' }));
      if (received + chunk.length > body.length) {
        if (sized) return fail(Object.assign(new Error('Request body size did not match Content-Length'), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH' }));
        const grown = Buffer.allocUnsafe(Math.min(limit, Math.max(body.length * 2, received + chunk.length)));
        body.copy(grown, 0, 0, received);
        body = grown;
      }
      chunk.copy(body, received);
      received += chunk.length;
    };
    const onEnd = () => {
      if (sized && received !== declared) return fail(Object.assign(new Error('Request body size did not match Content-Length'), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH' }));
      settled = true;
      resolve(received === body.length ? body : body.subarray(0, received));
    };
    payload.on('data', onData);
    payload.once('end', onEnd);
    payload.once('error', fail);
    // A client gone before the end: nothing more will come (the buffer is let go with the listeners).
    payload.once('close', () => fail(Object.assign(new Error('The request was aborted before its body arrived'), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH' })));
  });
}

/** Replaces Fastify's JSON parser: small bodies as before, large ones on the parser thread. */
export function installJsonBodyParser(app: FastifyInstance, defaultLimit: number, nice = DEFAULT_BACKGROUND_NICE): void {
  const thread = new JsonParserThread(nice);
  const small = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', (request: FastifyRequest, payload: NodeJS.ReadableStream, done: (err: Error | null, value?: unknown) => void) => {
    collectBody(request, payload, request.routeOptions.bodyLimit ?? defaultLimit).then(
      (body) => {
        if (body.length === 0) {
          done(Object.assign(new Error('Body cannot be empty when content-type is set to application/json'), { statusCode: 400, code: 'FST_ERR_CTP_EMPTY_JSON_BODY' }));
          return;
        }
        if (body.length < LARGE_JSON_BYTES) {
          small(request, body.toString('utf8'), done);
          return;
        }
        thread.parse(body, request.routeOptions.config?.rawJsonKeys).then((value) => done(null, value), (err: Error) => done(err));
      },
      (err: Error) => done(err),
    );
  });
  app.addHook('onClose', () => thread.close());
}
