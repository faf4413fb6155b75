/**
 * The protocol between Node and src/office/uno-bridge.py: one JSON object per line on the
 * bridge's stdin (jobs) and stdout (replies). Documents travel as file paths inside a job's
 * private temp directory, so lines stay small.
 */
export type TrackedChangesMode = 'markup' | 'accept' | 'reject';

/**
 * What a document needs from LibreOffice beyond load and export, as read from the package in Node.
 * A document needing nothing is loaded read-only and exported straight away.
 */
export interface DocumentWork {
  /** Fields LibreOffice must recompute (PAGEREF, REF, SEQ, DATE, …). */
  fields: boolean;
  /** Tables of contents, indexes, tables of figures. */
  indexes: boolean;
}

/** Milliseconds spent in each stage inside the bridge (absent stages did not run). */
export interface OfficeStages {
  load?: number;
  /** LibreOffice's own accept/reject dispatch (only when a caller asks the pool for it directly). */
  officeChanges?: number;
  refresh?: number;
  export?: number;
}

export interface ConvertRequest {
  id: number;
  op: 'convert';
  input: string;
  output: string;
  trackedChanges: TrackedChangesMode;
  /** LibreOffice import filter name; the bridge defaults to "MS Word 2007 XML". */
  loadFilter?: string;
  /** Absent: the bridge refreshes fields and indexes on a read-write load (the safe default). */
  work?: DocumentWork;
  /** The import filter's options (CSV separators, text encoding). */
  filterOptions?: string;
  /** Which LibreOffice application the document must open as (default writer); it picks the PDF export filter. */
  application?: 'writer' | 'calc' | 'impress';
  /** The PDF export filter's FilterData (absent: LibreOffice's defaults, nothing extra done). */
  filterData?: PdfFilterData;
  /** Turn every page style to landscape before the export (Writer and Calc). */
  landscape?: boolean;
  /** Calc: widen every used column to its content (CSV, which has no column widths of its own). */
  fitColumns?: boolean;
}

/** PDF export filter data as LibreOffice names it ("PDF Export" filter options). */
export type PdfFilterData = Record<string, boolean | number | string>;

export interface ReadyMessage {
  type: 'ready';
  officePid: number;
}

export type FailureKind = 'load' | 'export' | 'office';

export type ResultMessage =
  | { type: 'result'; id: number; ok: true; rss: number; stages?: OfficeStages }
  | { type: 'result'; id: number; ok: false; kind: FailureKind; message: string };

export type BridgeMessage = ReadyMessage | ResultMessage;

export function encodeRequest(request: ConvertRequest): string {
  return `${JSON.stringify(request)}\n`;
}

function isBridgeMessage(value: unknown): value is BridgeMessage {
  if (typeof value !== 'object' || value === null) return false;
  const type = (value as { type?: unknown }).type;
  if (type === 'ready') return typeof (value as ReadyMessage).officePid === 'number';
  if (type === 'result') {
    const result = value as ResultMessage;
    return typeof result.id === 'number' && typeof result.ok === 'boolean';
  }
  return false;
}

/**
 * Splits a byte stream into complete lines and parses each as a bridge message. Bytes after
 * the last newline wait for the next chunk; a line that is not a known message is reported
 * through `onGarbage` (the bridge is then considered broken by the caller).
 */
export class LineDecoder {
  private pending = '';

  constructor(
    private readonly onMessage: (message: BridgeMessage) => void,
    private readonly onGarbage: (line: string) => void,
  ) {}

  push(chunk: Buffer | string): void {
    this.pending += chunk.toString();
    let newline = this.pending.indexOf('\n');
    while (newline >= 0) {
      const line = this.pending.slice(0, newline).trim();
      this.pending = this.pending.slice(newline + 1);
      if (line) this.parse(line);
      newline = this.pending.indexOf('\n');
    }
  }

  private parse(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.onGarbage(line);
      return;
    }
    if (isBridgeMessage(value)) this.onMessage(value);
    else this.onGarbage(line);
  }
}
