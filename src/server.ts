import type { Server, ServerResponse } from 'node:http';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';

/** Process entry: load config, build the app, listen, and drain on SIGTERM/SIGINT. */
async function main() {
  const config = loadConfig();
  const app = await buildApp(config);
  const openRequests = trackOpenRequests(app.server);
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: no new requests, finishing in-flight ones');
    // At the end of the grace period the documents still being processed are stopped: their
    // requests get 503 + Retry-After (a moment is left for those answers to go out), then exit.
    const force = setTimeout(() => {
      app.log.error('graceful shutdown took too long: stopping the work still running and exiting');
      const exit = () => process.exit(1);
      setTimeout(exit, 2_000).unref();
      // The stopped requests are answered (503) on their way out; exit once none is left unanswered.
      void app.services.abandonWork().then(() => openRequests.whenAnswered().then(exit));
    }, config.shutdownGraceMs);
    // Requests still waiting for a converter or worker near the end of the grace period would be
    // cut off with the process: they get 503 + Retry-After instead, while there is time to answer.
    const grace = config.shutdownGraceMs;
    setTimeout(() => {
      app.log.warn('grace period ending: answering the requests still queued with 503');
      app.services.office?.shedQueued();
      app.services.workers.shedQueued();
    }, grace - Math.min(3_000, grace / 2)).unref();
    // One turn of the event loop first: connections the kernel has already completed are accepted
    // and served rather than reset when the listening socket closes (a reset POST cannot be retried).
    acceptPendingConnections()
      .then(() => app.close())
      .then(
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
  if (process.env.DIAG_EVENT_LOOP_STALL_MS) watchEventLoopStalls(Number(process.env.DIAG_EVENT_LOOP_STALL_MS));
}

/**
 * Diagnostic (bench/lb-isolation.ts): every time the event loop was held longer than `thresholdMs`,
 * one line on stderr with when and for how long. Off unless DIAG_EVENT_LOOP_STALL_MS is set.
 */
function watchEventLoopStalls(thresholdMs: number) {
  const tick = 5;
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const stall = now - last - tick;
    if (stall > thresholdMs) process.stderr.write(`diag-stall ${Date.now()} ${stall.toFixed(0)}\n`);
    last = now;
  }, tick).unref();
}

/** Counts the requests the server has received and not yet answered; resolves when none is left. */
function trackOpenRequests(server: Server): { whenAnswered(): Promise<void> } {
  let open = 0;
  server.on('request', (_request, response: ServerResponse) => {
    open++;
    response.once('close', () => open--);
  });
  return {
    async whenAnswered() {
      while (open > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    },
  };
}

/** A pause with at least one poll phase (accepts), then close in the check phase right after one. */
const acceptPendingConnections = () =>
  new Promise<void>((resolve) => setTimeout(() => setImmediate(resolve), 50));

main().catch((err) => {
  // A setting the service refuses: one line naming it, and exit 2 (an orchestrator shows the line).
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(2);
  }
  console.error('docproc failed to start:', err);
  process.exit(1);
});
