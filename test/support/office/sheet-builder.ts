import { writeZip } from '../../../src/documents/ooxml/zip/write.js';
import { buildOdfPackage } from './odf-package.js';

/** Minimal spreadsheets LibreOffice opens, for the structure-budget tests. */

const ODS_NAMESPACES =
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" ' +
  'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" ' +
  'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"';

/** An ODS whose spreadsheet body is `tables` (one or more <table:table> elements). */
export function buildOds(tables: string): Buffer {
  const content =
    `<?xml version="1.0" encoding="UTF-8"?><office:document-content ${ODS_NAMESPACES} office:version="1.2">` +
    '<office:automatic-styles><style:style style:name="ce1" style:family="table-cell"><style:table-cell-properties fo:background-color="#ff0000"/></style:style></office:automatic-styles>' +
    `<office:body><office:spreadsheet>${tables}</office:spreadsheet></office:body></office:document-content>`;
  return buildOdfPackage('application/vnd.oasis.opendocument.spreadsheet', content);
}

/** An ODS number cell, repeated `columns` times. */
export const odsNumber = (value: number, columns = 1) =>
  `<table:table-cell office:value-type="float" office:value="${value}"${columns > 1 ? ` table:number-columns-repeated="${columns}"` : ''}><text:p>${value}</text:p></table:table-cell>`;

const SML = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** An XLSX with one worksheet: `sheet` is the worksheet element's content (sheetData, mergeCells, …). */
export function buildXlsx(sheet: string, { definedNames = '' } = {}): Buffer {
  const xml = (s: string) => Buffer.from(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n${s}`);
  return writeZip([
    {
      name: '[Content_Types].xml',
      data: xml(
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
          '<Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
          '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>',
      ),
    },
    { name: '_rels/.rels', data: xml(`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`) },
    {
      name: 'xl/workbook.xml',
      data: xml(`<workbook xmlns="${SML}" xmlns:r="${REL}"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets>${definedNames ? `<definedNames>${definedNames}</definedNames>` : ''}</workbook>`),
    },
    { name: 'xl/_rels/workbook.xml.rels', data: xml(`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`) },
    { name: 'xl/worksheets/sheet1.xml', data: xml(`<worksheet xmlns="${SML}">${sheet}</worksheet>`) },
  ]);
}
