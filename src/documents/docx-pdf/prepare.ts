import type { DocumentWork } from '../../office/bridge-protocol.js';
import type { TrackedChangesMode } from '../../office/index.js';
import { OpcPackage } from '../ooxml/package.js';
import { scrubPackage } from '../ooxml/scrub.js';
import { resolveTrackedChanges } from '../ooxml/tracked-changes.js';
import { documentWork } from './document-work.js';
import { assertLayoutBudget } from './layout-budget.js';

/** A DOCX made ready for LibreOffice, and what LibreOffice still has to do to it. */
export interface PreparedDocx {
  /** The rewritten package; absent when the input needed no rewrite (use the bytes you have). */
  rewritten?: Uint8Array;
  work: DocumentWork;
  /** Milliseconds spent on the zip guard + scrub, and on resolving tracked changes. */
  timings: { guards: number; changes?: number };
}

/**
 * Reads the package once: refuses what is not a DOCX, zip bombs, encrypted packages and tables
 * LibreOffice cannot lay out in time or memory (layout-budget.ts); removes
 * references to outside content (ooxml/scrub.ts); with `accept`/`reject` resolves tracked changes
 * in the OOXML so LibreOffice never sees them; and tells what else the document needs
 * (document-work.ts). CPU-bound and input-sized: it runs in a worker thread (workers/docx-pdf.ts).
 */
export function prepareDocxForPdf(input: Uint8Array, mode: TrackedChangesMode): PreparedDocx {
  const started = performance.now();
  const pkg = OpcPackage.open(Buffer.from(input.buffer, input.byteOffset, input.byteLength), { tolerant: true });
  assertLayoutBudget(pkg);
  const scrubbed = scrubPackage(pkg);
  const guards = performance.now() - started;
  let resolved = 0;
  let changes: number | undefined;
  if (mode !== 'markup') {
    const changesStarted = performance.now();
    resolved = resolveTrackedChanges(pkg, mode).changes;
    changes = performance.now() - changesStarted;
  }
  const work = documentWork(pkg);
  const rewritten = scrubbed || resolved ? pkg.write() : undefined;
  return {
    rewritten: rewritten && new Uint8Array(rewritten.buffer, rewritten.byteOffset, rewritten.byteLength),
    work,
    timings: changes === undefined ? { guards } : { guards, changes },
  };
}
