import type { MessagePort } from 'node:worker_threads';
import type { Warning } from '../src/documents/warnings.js';
import { portCaller } from '../src/compute/port-call.js';
import { envelopeTask } from '../src/compute/task-envelope.js';
import { htmlToDocx as convertHtml } from '../src/documents/html/index.js';
import { markdownToDocx as convertMarkdown } from '../src/documents/markdown/index.js';
import type { ConversionLimits, ConversionResult, MarkupOptions, RemoteImage, RemoteImageSource } from '../src/documents/model/types.js';

/** Worker tasks for Markdown/HTML → DOCX. Input and output are structured-clonable. */
export interface MarkupTaskInput {
  source: Uint8Array;
  reference?: Uint8Array;
  limits: ConversionLimits;
  /**
   * Where the engine asks for its http(s) images: a port to the operation on the main thread, which
   * fetches them under src/inputs/remote-inputs.ts (port-call.ts; the worker does no network I/O).
   * Absent: no image is fetched.
   */
  remoteImages?: MessagePort;
  /** Instead of a port: every http(s) image is refused for this reason (the policy allows no image host). */
  remoteImagesRefused?: string;
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

/** Runs an engine with the task's port as its RemoteImageSource, closing the port when it ends. */
async function withRemoteImages(input: MarkupTaskInput, convert: (source: Uint8Array, options: MarkupOptions) => Promise<ConversionResult>) {
  const caller = input.remoteImages && portCaller<string[], RemoteImage[]>(input.remoteImages);
  const refused = input.remoteImagesRefused;
  const remoteImages: RemoteImageSource | undefined = caller
    ? { fetch: caller.call }
    : refused !== undefined
      ? { refusedAll: refused, fetch: async (urls) => urls.map(() => ({ refused })) }
      : undefined;
  try {
    return toOutput(await convert(input.source, { ...input, remoteImages }));
  } finally {
    caller?.close();
  }
}

export const markdownToDocx = envelopeTask((input: MarkupTaskInput) => withRemoteImages(input, convertMarkdown));

export const htmlToDocx = envelopeTask((input: MarkupTaskInput) => withRemoteImages(input, convertHtml));
