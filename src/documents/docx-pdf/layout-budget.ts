import { ErrorCode, DomainError } from '../../errors/domain-error.js';
import type { OpcPackage } from '../ooxml/package.js';
import { decodeXmlBytes } from '../ooxml/xml.js';
import { pictureSize } from './image-size.js';

/**
 * What LibreOffice's layout can take within a conversion's time and memory, checked in Node before
 * the document reaches it. Nested tables cost LibreOffice more than linearly: on the shared 2-core
 * machine 64 levels converted as fast as 16, 96 took 2.5 times as long and 128 did not finish in two
 * minutes (a 1.4 KB DOCX with 3 000 levels held a process for the whole deadline). Table cells cost
 * time and memory at layout whatever the table's layout mode: 6 000, 12 000 and 30 000 cells took
 * 35, 72 and ~150 s of layout on that (busy) machine, 30 000 cells 330 MB, and an 8000 × 60 table
 * took a process to ~2.8 GB (~6 KB a cell). The cell limit is the one Markdown and HTML tables have.
 * Both are counted on the XML text in one linear pass, whatever the namespace prefix, and refused
 * with 422 DOCUMENT_TOO_COMPLEX naming the limit.
 *
 * A Word 97–2003 DOC or DOT gets the same limits (doc-layout.ts: cell marks and sprmPItap read from
 * its piece table and paragraph properties; blip-pictures.ts: the pixel size of its PNG, JPEG and
 * DIB pictures), as a PPT's pictures do. LibreOffice lays a DOC's tables out as a DOCX's: DOCs it
 * wrote itself from generated HTML tables (soffice --infilter='HTML (StarWriter)' --convert-to
 * 'doc:MS Word 97') took 2.3, 5.9, 12.3 and 68 s to convert to PDF with 1 000, 6 000, 12 000 and
 * 30 000 cells, and 2.4, 2.7, 14.7 and 38 s with tables nested 16, 64, 96 and 128 deep; one
 * 11 000 × 10 000 PNG (341 KB) in a DOC took 53 s (soffice 7.4, a cold process each, the shared
 * 2-core machine under load from other work).
 */
export interface LayoutBudget {
  /** Tables inside table cells, levels deep (Word documents rarely go past 3). */
  maxTableNesting: number;
  /** Table cells in all the document's parts together. */
  maxTableCells: number;
  /**
   * Pixels of one raster picture (width × height its header declares). LibreOffice decodes a picture
   * whole, ~4 bytes a pixel: four 10 000² PNGs of 300 KB each took a process to ~1.3 GB. 10⁸ pixels
   * (~400 MB decoded) passes every camera's photo; one larger cannot be converted within the default
   * office memory limit, and a single allocation that large is what LibreOffice takes quietly when
   * the kernel refuses it (the picture left out of the PDF).
   */
  maxPicturePixels: number;
}

export const LAYOUT_BUDGET: Readonly<LayoutBudget> = { maxTableNesting: 32, maxTableCells: 25_000, maxPicturePixels: 100_000_000 };

/** Parts that cannot hold markup LibreOffice lays out; every other part is read, whatever it claims to be. */
const MEDIA_PART = /^(image|audio|video)\//i;
/** Start, end and empty tags of table (tbl) and cell (tc) elements, in any namespace prefix. */
const TABLE_TAGS = /<(\/?)(?:[\w.-]+:)?(tbl|tc)(?=[\s/>])[^<>]*?(\/?)>/g;

export function layoutTooComplex(limit: keyof LayoutBudget, budget: LayoutBudget = LAYOUT_BUDGET) {
  const message =
    limit === 'maxTableNesting'
      ? `The document nests tables more than ${budget.maxTableNesting} levels deep, more than the converter lays out in time; flatten the nested tables.`
      : limit === 'maxPicturePixels'
        ? `A picture in the document has more than ${budget.maxPicturePixels.toLocaleString('en')} pixels, more than the converter decodes within its memory; scale the picture down.`
        : `The document's tables have more than ${budget.maxTableCells.toLocaleString('en')} cells, more than the converter lays out within its memory; split the tables or the document.`;
  return new DomainError(ErrorCode.DOCUMENT_TOO_COMPLEX, message, { extensions: { limit: { name: `convert.${limit}`, max: budget[limit] } } });
}

export interface TableShape {
  /** Deepest nesting of tables seen. */
  nesting: number;
  cells: number;
}

/** Table nesting and cells of one part's XML text; throws the 422 as soon as a limit is passed. */
export function measureTables(xml: string, budget: LayoutBudget = LAYOUT_BUDGET, counted: TableShape = { nesting: 0, cells: 0 }): TableShape {
  let depth = 0;
  for (const [, closing, name, selfClosing] of xml.matchAll(TABLE_TAGS)) {
    if (name === 'tc') {
      if (!closing && ++counted.cells > budget.maxTableCells) throw layoutTooComplex('maxTableCells', budget);
    } else if (closing) depth = Math.max(0, depth - 1);
    else if (!selfClosing) {
      depth++;
      if (depth > counted.nesting) counted.nesting = depth;
      if (depth > budget.maxTableNesting) throw layoutTooComplex('maxTableNesting', budget);
    }
  }
  return counted;
}

/**
 * Checks every part of the package against the budget: the tables of every part but media (a main
 * document part may be declared as anything), and the pixels of every part that is a raster picture
 * by its own first bytes (whatever its name or declared type).
 */
export function assertLayoutBudget(pkg: OpcPackage, budget: LayoutBudget = LAYOUT_BUDGET): TableShape {
  const counted: TableShape = { nesting: 0, cells: 0 };
  for (const part of pkg.partNames()) {
    const bytes = pkg.bytes(part);
    if (!bytes) continue;
    const picture = pictureSize(bytes);
    if (picture && picture.width * picture.height > budget.maxPicturePixels) throw layoutTooComplex('maxPicturePixels', budget);
    if (picture || MEDIA_PART.test(pkg.contentType(part) ?? '')) continue;
    measureTables(decodeXmlBytes(bytes), budget, counted);
  }
  return counted;
}
