export { OfficePool } from './office-pool.js';
export type {
  ConvertToPdfOptions,
  JobEvent,
  JobOutcome,
  OfficePoolEvents,
  OfficePoolOptions,
  OfficePoolStats,
  RestartEvent,
  RestartReason,
} from './office-pool.js';
export type { TrackedChangesMode } from './bridge-protocol.js';
