const SIGNALS = ['SIGTERM', 'SIGINT'] as const;
/** The signal handlers of all guards, told apart from the application's own. */
const SIGNAL_GUARDS = new WeakSet<(...args: never[]) => void>();

/**
 * Makes sure office processes do not outlive this process: on exit, and on SIGTERM/SIGINT when
 * nothing else listens for them (then it stops everything and dies as the signal's default action
 * would have). A server with its own graceful shutdown owns the signals and calls close() itself.
 */
export class ExitGuard {
  private readonly onExit = () => this.stopNow();
  private readonly onSignal = (signal: NodeJS.Signals) => {
    if (process.listeners(signal).some((listener) => !SIGNAL_GUARDS.has(listener))) return;
    this.stopNow();
    process.kill(process.pid, signal);
  };

  /** `stopNow` must be synchronous and not wait: it runs in exit and signal handlers. */
  constructor(private readonly stopNow: () => void) {
    SIGNAL_GUARDS.add(this.onSignal);
  }

  install(handleSignals: boolean): void {
    process.once('exit', this.onExit);
    if (handleSignals) for (const signal of SIGNALS) process.on(signal, this.onSignal);
  }

  remove(): void {
    process.removeListener('exit', this.onExit);
    for (const signal of SIGNALS) process.removeListener(signal, this.onSignal);
  }
}
