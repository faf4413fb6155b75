import Fastify, { type FastifyInstance } from 'fastify';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ConfigError, type Config } from './config.js';
import { assertCertificateCurrent } from './documents/sign/identity.js';
import { installAuth } from './http/auth.js';
import { DocumentResultSchema, WarningSchema } from './http/document-reply.js';
import { installErrorHandling } from './http/error-handler.js';
import { installLimits } from './http/limits.js';
import { loggerOptions } from './http/logging.js';
import { installMetrics } from './http/metrics.js';
import { ProblemSchema } from './http/problem.js';
import { requestIdFactory } from './http/request-id.js';
import { installRequestDeadline } from './http/request-deadline.js';
import { openApiOptions } from './http/openapi.js';
import { installBodyBudget } from './http/body-budget.js';
import { InflightBodyBudget, installInflightBodyBudget } from './http/inflight-bodies.js';
import { installClosedSchemas } from './http/closed-schemas.js';
import { installResponseDocs } from './http/response-docs.js';
import { installMultipartTwins } from './http/multipart-twin.js';
import { validatorCompilerFactory } from './http/validator-compiler.js';
import { installJobContext } from './http/job-context.js';
import { installJsonDepthCheck } from './http/json-depth.js';
import { installJsonBodyParser } from './http/json-body.js';
import { installMultipartChecks, MULTIPART_COUNTS, rememberUploadedFile } from './http/multipart.js';
import rootRoutes from './routes/root.js';
import metricsRoutes from './routes/metrics.js';
import annotateRoutes from './routes/v1/annotate.js';
import authRoutes from './routes/v1/auth.js';
import convertRoutes from './routes/v1/convert.js';
import healthRoutes from './routes/v1/health.js';
import signRoutes from './routes/v1/sign.js';
import verifyRoutes from './routes/v1/verify.js';
import { createServices, describeSetup, type ServiceOverrides, type Services } from './services.js';

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
}

export interface BuildOptions extends ServiceOverrides {
  /** Pass false to silence logs (tests), or a pino options object. */
  logger?: boolean | object;
}

/** Assembles the service: external plugins, our hooks, routes, and the one error handler. */
const trustHops = (hops: number) => (_address: string, hop: number) => hop < hops;

/** Opens SIGNING_P12 (or the allowed development CA); a file that cannot be opened stops start-up. */
async function requireSigningIdentity(services: Services): Promise<void> {
  try {
    // A certificate outside its validity period opens but signs nothing that could validate.
    assertCertificateCurrent((await services.signing()).identity.certificate, new Date());
  } catch (err) {
    await services.close();
    const reason = (err as Error).message.replace(/\s+/g, ' ');
    throw new ConfigError('SIGNING_P12', `(with SIGNING_P12_PASSWORD) cannot be used for signing: ${reason}`);
  }
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger === undefined ? loggerOptions(config.logLevel) : options.logger,
    genReqId: requestIdFactory(config.trustRequestId),
    // A hop count trusts that many proxies from the socket inwards (as Fastify does for numbers).
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    bodyLimit: config.limits.maxJsonBytes,
    requestTimeout: config.limits.requestTimeoutMs,
    forceCloseConnections: 'idle',
    // A request on a connection accepted before close() is served (with `Connection: close`), not
    // answered with Fastify's bare 503: behind a load balancer that POST was already sent and cannot
    // be re-sent elsewhere, and the bare body is not our error format.
    return503OnClosing: false,
    schemaController: { compilersFactory: { buildValidator: validatorCompilerFactory() } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const services = createServices(config, app.log, options);
  app.decorate('services', services);
  app.addHook('onClose', () => services.close());
  describeSetup(services, app.log);
  // Load (or create, the first time) the signing identity now rather than on the first request;
  // production does not start with one it cannot open.
  if (config.production) await requireSigningIdentity(services);
  else services.signing().catch((err) => app.log.error({ err }, 'the signing identity could not be loaded; sign and verify answer 5xx'));
  if (services.office) await services.office.start();
  if (!(await services.store.connected())) app.log.error('the key store is not reachable yet; protected routes answer 503 until it is');

  // While draining, answers close their keep-alive connection, so the server can finish closing
  // as soon as the in-flight requests are done instead of waiting for idle clients.
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  installRequestDeadline(app, config.limits.requestTimeoutMs);
  app.addHook('onSend', async (_request, reply) => {
    if (draining) reply.header('connection', 'close');
  });
  installErrorHandling(app, { maxFileBytes: config.limits.maxFileBytes });
  installClosedSchemas(app);
  installResponseDocs(app);
  installMultipartTwins(app);
  installMetrics(app, services.metrics);
  installAuth(app, services.store, config.pepper, { max: config.limits.rateLimitPerWindow, windowSeconds: config.limits.rateLimitWindowSeconds });
  installLimits(app, services.store, config.limits);
  installJobContext(app);

  // Every operation takes JSON or multipart (see each schema); Fastify's built-in text/plain parser
  // would hand a route a string it never expects. Without it, other types get 415 (error handler).
  app.removeContentTypeParser('text/plain');
  installJsonBodyParser(app, config.limits.maxJsonBytes, config.workers.nice);
  app.addSchema(ProblemSchema);
  app.addSchema(WarningSchema);
  app.addSchema(DocumentResultSchema);
  await app.register(swagger, openApiOptions(services.version));
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { persistAuthorization: true, displayRequestDuration: true } });
  await app.register(multipart, {
    attachFieldsToBody: 'keyValues',
    onFile: rememberUploadedFile,
    // Text fields are small by design (JSON options); documents and images travel as file parts.
    limits: { fileSize: config.limits.maxFileBytes, ...MULTIPART_COUNTS, fieldSize: config.limits.maxFieldBytes },
    throwFileSizeLimit: true,
  });
  installMultipartChecks(app, { maxFileBytes: config.limits.maxFileBytes, maxFieldBytes: config.limits.maxFieldBytes, fallbackBodyBytes: config.limits.maxJsonBytes });
  installJsonDepthCheck(app);
  installBodyBudget(app, config.limits.maxJsonBytes);
  installInflightBodyBudget(app, new InflightBodyBudget(config.limits.maxInflightBodyBytes), config.limits.maxJsonBytes);

  app.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
  await app.register(metricsRoutes(services));
  await app.register(rootRoutes(services));
  await app.register(
    async (v1) => {
      await v1.register(healthRoutes(services));
      await v1.register(authRoutes(services));
      await v1.register(convertRoutes(services));
      await v1.register(annotateRoutes(services));
      await v1.register(signRoutes(services));
      await v1.register(verifyRoutes(services));
    },
    { prefix: '/v1' },
  );
  return app;
}
