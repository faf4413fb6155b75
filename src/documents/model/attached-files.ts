import { fileTooLarge, validationError } from '../../errors/domain-error.js';

/**
 * Files a Markdown or HTML document brings with it (images it refers to by relative name), sent in
 * the same request: Gotenberg's model. A reference and a file name match when they are equal after
 * the same normalisation (normaliseReference); nothing is ever looked up on a file system, and a
 * reference that climbs out of the document's folder ("../x.png") matches nothing.
 */
export interface AttachedFile {
  name: string;
  data: Uint8Array;
}

export interface AttachedFileLimits {
  /** Files per request. */
  maxFiles: number;
  /** Their bytes together. */
  maxTotalBytes: number;
}

export const DEFAULT_ATTACHED_FILE_LIMITS: AttachedFileLimits = { maxFiles: 32, maxTotalBytes: 10 * 1024 * 1024 };

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * The name a relative reference or a file name stands for: query and fragment dropped, %-escapes
 * decoded, backslashes read as slashes, Unicode NFC, "." segments and leading slashes dropped, ".."
 * taking back one segment. Undefined for URLs with a scheme, empty names and names that climb out
 * of the document's folder.
 */
export function normaliseReference(reference: string): string | undefined {
  if (SCHEME.test(reference.trim())) return undefined;
  let name = reference.trim().replace(/[?#].*$/s, '');
  try {
    name = decodeURIComponent(name);
  } catch {
    // a stray % is a character of the name
  }
  const segments: string[] = [];
  for (const segment of name.replace(/\\/g, '/').normalize('NFC').split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (segments.length === 0) return undefined;
      segments.pop();
    } else segments.push(segment);
  }
  return segments.length > 0 ? segments.join('/') : undefined;
}

/**
 * The file a normalised reference names: the file of that exact name, else — multipart clients send
 * a part's file name without its folders — the one file of the reference's last segment sent without
 * a folder (none when two folders' files could be meant).
 */
export function findAttached(files: ReadonlyMap<string, Uint8Array>, name: string): Uint8Array | undefined {
  const exact = files.get(name);
  if (exact || !name.includes('/')) return exact;
  return files.get(name.slice(name.lastIndexOf('/') + 1));
}

/** The attached files by normalised name; refuses too many, too large together, unnamable or clashing names. */
export function attachedFileMap(files: readonly AttachedFile[], limits: AttachedFileLimits = DEFAULT_ATTACHED_FILE_LIMITS): Map<string, Uint8Array> {
  if (files.length > limits.maxFiles) {
    throw validationError(`At most ${limits.maxFiles} files can be sent with a document; this request has ${files.length}.`, [{ field: 'files', issue: `at most ${limits.maxFiles} files` }]);
  }
  const total = files.reduce((sum, f) => sum + f.data.byteLength, 0);
  if (total > limits.maxTotalBytes) throw fileTooLarge(`The files sent with the document add up to more than ${Math.round(limits.maxTotalBytes / 1048576)} MB.`);
  const map = new Map<string, Uint8Array>();
  for (const file of files) {
    const name = normaliseReference(file.name);
    if (!name) throw validationError(`The file name "${file.name.slice(0, 200)}" cannot be referred to from a document (empty, a URL, or outside the document's folder).`, [{ field: 'files', issue: 'unusable name' }]);
    if (map.has(name)) throw validationError(`Two files are named "${name.slice(0, 200)}" (after normalisation); send each name once.`, [{ field: 'files', issue: 'duplicate name' }]);
    map.set(name, file.data);
  }
  return map;
}
