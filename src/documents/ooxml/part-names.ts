import { PACKAGE_SOURCE } from './constants.js';

/**
 * Part names of OPC packages (ECMA-376 Part 2 §9.1.1) and how they map to ZIP item names,
 * relationship targets and reference URIs.
 *
 * - A part is found by its exact name: the ZIP item name with a leading "/", percent-escapes
 *   decoded (that is how a part name is read from a ZIP item, a relationship Target or a URI).
 *   Case and Unicode form count, as they do for LibreOffice, which finds parts by exact name.
 * - Two parts whose names are *equivalent* — equal once case-folded, percent-decoded and
 *   Unicode-normalised (§9.1.1.2) — make the package invalid: one reader would take one, another
 *   the other. So do duplicates and a part whose name is a folder of another part's name.
 *   `equivalenceKey` is that comparison; the ZIP reader and writer refuse such packages.
 */

/** Decodes every run of %XX escapes as UTF-8 (invalid sequences become U+FFFD, never an exception). */
export function percentDecode(name: string): string {
  if (!name.includes('%')) return name;
  return name.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => Buffer.from(run.replace(/%/g, ''), 'hex').toString('utf8'));
}

/** The key under which two names are equivalent: percent-decoded, Unicode-normalised (NFKC), case-folded. */
export function equivalenceKey(name: string): string {
  return percentDecode(name).normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC');
}

/** The part name of a ZIP item: "word/document.xml" → "/word/document.xml", escapes decoded. */
export const partNameOf = (zipItemName: string): string => '/' + percentDecode(zipItemName);

/** A part name as given by a caller ("word/x.xml" or "/word/x.xml", escaped or not) in the form parts are found by. */
export const normalisePartName = (partName: string): string => percentDecode(partName.startsWith('/') ? partName : '/' + partName);

/** "/word/document.xml" → "/word/_rels/document.xml.rels"; "/" (the package) → "/_rels/.rels". */
export function relationshipsPartOf(sourcePart: string): string {
  if (sourcePart === PACKAGE_SOURCE) return '/_rels/.rels';
  const slash = sourcePart.lastIndexOf('/');
  return `${sourcePart.slice(0, slash)}/_rels/${sourcePart.slice(slash + 1)}.rels`;
}

/** The source part of a relationships part ("/" = the package), or undefined when `partName` is not one. */
export function sourceOfRelationshipsPart(partName: string): string | undefined {
  const match = /^(.*\/)_rels\/([^/]*)\.rels$/.exec(partName);
  return match ? match[1] + match[2] : undefined;
}

/** Resolves an internal relationship target (a relative URI) against its source part, giving a part name. */
export function resolvePartName(sourcePart: string, target: string): string {
  try {
    return percentDecode(new URL(target, `http://package${sourcePart}`).pathname);
  } catch {
    return target;
  }
}

/** The Target to write for a relationship from `sourcePart` to `partName`: relative when it lies in the source's folder. */
export function relativeTarget(sourcePart: string, partName: string): string {
  const folder = sourcePart.slice(0, sourcePart.lastIndexOf('/') + 1);
  return partName.startsWith(folder) ? partName.slice(folder.length) : partName;
}

/** The part name as a URI path (OPC part names are ASCII with percent-encoding). */
export function partUri(partName: string): string {
  return partName
    .split('/')
    .map((segment) => segment.replace(/%|[^A-Za-z0-9\-._~!$&'()*+,;=:@]/gu, (c) => encodeURIComponent(c)))
    .join('/');
}

/**
 * Why a ZIP item name cannot name a part (or a folder, with a trailing "/"), or undefined when it
 * can: readers disagree on empty, "." and ".." segments, absolute names, backslashes (a separator
 * for some) and control characters.
 */
export function itemNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'an empty name';
  if (name.startsWith('/')) return 'an absolute name';
  if (name.includes('\\')) return 'a backslash';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'a control character';
  const segments = (name.endsWith('/') ? name.slice(0, -1) : name).split('/');
  for (const segment of segments) {
    const decoded = percentDecode(segment);
    if (decoded === '' || decoded === '.' || decoded === '..') return `the segment "${segment}"`;
    if (decoded.includes('/') || decoded.includes('\\')) return 'an escaped separator';
  }
  return undefined;
}

/** Two names a package cannot hold together, and why. */
export interface NameClash {
  first: string;
  second: string;
  why: 'duplicate' | 'equivalent' | 'folder';
}

/** The sentence a refusal gives for a clash. */
export function describeClash({ first, second, why }: NameClash): string {
  const [a, b] = [first, second].map((n) => JSON.stringify(n.length > 100 ? `${n.slice(0, 100)}…` : n));
  if (why === 'duplicate') return `it holds the part ${a} twice`;
  if (why === 'folder') return `${a} and ${b} name a part and a folder of the same name`;
  return `the part names ${a} and ${b} are equivalent (ECMA-376 Part 2 §9.1.1: compared case-insensitively, percent-decoded and Unicode-normalised)`;
}

/**
 * Refuses names a package cannot hold together: duplicates, equivalent names, and a name that is
 * another's folder ("word/a.xml" beside "word/a.xml/b"). Folders (names ending in "/") only clash
 * with parts.
 */
export class PartNameSet {
  private readonly parts = new Map<string, string>();
  private readonly folders = new Map<string, string>();

  /** Adds a ZIP item name; returns the clash it makes with a name added before, if any. */
  add(name: string): NameClash | undefined {
    const folder = name.endsWith('/');
    const key = equivalenceKey(folder ? name.slice(0, -1) : name);
    const clash = (first: string, why: NameClash['why']): NameClash => ({ first, second: name, why: why === 'equivalent' && first === name ? 'duplicate' : why });
    if (folder) {
      const part = this.parts.get(key);
      if (part !== undefined) return clash(part, 'folder');
      if (!this.folders.has(key)) this.folders.set(key, name);
      return undefined;
    }
    const same = this.parts.get(key);
    if (same !== undefined) return clash(same, 'equivalent');
    const folderOfSameName = this.folders.get(key);
    if (folderOfSameName !== undefined) return clash(folderOfSameName, 'folder');
    this.parts.set(key, name);
    const segments = key.split('/');
    for (let i = 1; i < segments.length; i++) {
      const prefix = segments.slice(0, i).join('/');
      const part = this.parts.get(prefix);
      if (part !== undefined) return clash(part, 'folder');
      if (!this.folders.has(prefix)) this.folders.set(prefix, name);
    }
    return undefined;
  }
}
