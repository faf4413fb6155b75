import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Fastify's genReqId. A caller-chosen X-Request-Id is kept only when `trustGiven` (TRUST_REQUEST_ID:
 * a proxy in front sets the header on every request) and well-formed; otherwise every request gets
 * a fresh id, so nobody can give a request another request's id and muddle the log or the answers.
 */
export function requestIdFactory(trustGiven: boolean): (req: IncomingMessage) => string {
  if (!trustGiven) return () => randomUUID();
  return (req) => {
    const given = req.headers['x-request-id'];
    return typeof given === 'string' && SAFE_ID.test(given) ? given : randomUUID();
  };
}
