import type { Warning } from '../src/documents/warnings.js';
import { envelopeTask } from '../src/compute/task-envelope.js';
import { htmlToDocx as convertHtml } from '../src/documents/html/index.js';
import { markdownToDocx as convertMarkdown } from '../src/documents/markdown/index.js';
import type { ConversionLimits } from '../src/documents/model/types.js';

/** Worker tasks for Markdown/HTML → DOCX. Input and output are structured-clonable. */
export interface MarkupTaskInput {
  source: Uint8Array;
  reference?: Uint8Array;
  limits: ConversionLimits;
  remoteImages?: { allowHosts: string[]; allowPrivateAddresses?: boolean };
  /** Files sent with the document, by normalised name. */
  files?: [string, Uint8Array][];
}

export interface MarkupTaskOutput {
  docx: Uint8Array;
  warnings: Warning[];
}

const toOutput = ({ docx, warnings }: { docx: Buffer; warnings: Warning[] }): MarkupTaskOutput => ({
  docx: new Uint8Array(docx.buffer, docx.byteOffset, docx.byteLength),
  warnings,
});

export const markdownToDocx = envelopeTask(async (input: MarkupTaskInput) => toOutput(await convertMarkdown(input.source, input)));

export const htmlToDocx = envelopeTask(async (input: MarkupTaskInput) => toOutput(await convertHtml(input.source, input)));
