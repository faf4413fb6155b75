import PizZip from 'pizzip';
import { CONTENT_TYPES_PART } from '../ooxml/constants.js';
import type { OpcPackage } from '../ooxml/package.js';

/** The PizZip docxtemplater works on, and how its changes get back into the package. */
export interface TemplaterZip extends PizZip {
  /** Puts every part docxtemplater wrote back into `pkg` (parts it did not touch are left as they are). */
  copyChangesTo(pkg: OpcPackage): void;
}

/**
 * docxtemplater only takes a PizZip. This one is built from the bytes the one ZIP reader
 * (ooxml/zip/read.ts) produced, so docxtemplater sees exactly the parts everything else sees;
 * PizZip never parses or writes a ZIP here: its parts go back into the OpcPackage, which writes.
 */
export function templaterZip(pkg: OpcPackage): TemplaterZip {
  const zip = new PizZip();
  for (const partName of [CONTENT_TYPES_PART, ...pkg.partNames()]) {
    const bytes = pkg.bytes(partName);
    if (bytes) zip.file(partName.slice(1), bytes, { binary: true });
  }
  const given = new Map(Object.entries(zip.files));
  return Object.assign(zip, {
    copyChangesTo(target: OpcPackage) {
      for (const [name, file] of Object.entries(zip.files)) {
        // docxtemplater replaces the file objects of the parts it writes (and adds folder entries).
        if (file.dir || given.get(name) === file) continue;
        target.setBytes('/' + name, file.asUint8Array());
      }
    },
  });
}
