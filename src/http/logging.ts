import type { FastifyServerOptions } from 'fastify';

/** Paths whose query strings carry secrets (e-mail codes) and must never be logged. */
const SECRET_QUERY_PATHS = ['/v1/auth/'];

export function loggableUrl(url: string): string {
  const [path, query] = url.split('?', 2);
  if (query === undefined) return url;
  return SECRET_QUERY_PATHS.some((p) => path.startsWith(p)) ? `${path}?[redacted]` : url;
}

export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'], censor: '[redacted]' },
    serializers: {
      req: (req) => ({ method: req.method, url: loggableUrl(req.url), remoteAddress: req.ip }),
    },
  };
}
