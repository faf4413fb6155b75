import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';

/** Process entry: load config, build the app, listen, and drain on SIGTERM/SIGINT. */
async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const app = await buildApp(config);
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: no new requests, finishing in-flight ones');
    const force = setTimeout(() => {
      app.log.error('graceful shutdown took too long; exiting');
      process.exit(1);
    }, config.shutdownGraceMs).unref();
    app.close().then(
      () => {
        clearTimeout(force);
        app.log.info('stopped');
        process.exit(0);
      },
      (err) => {
        app.log.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  await app.listen({ port: config.port, host: config.host });
}

main().catch((err) => {
  console.error('docproc failed to start:', err);
  process.exit(1);
});
