import { DomainError, ErrorCode } from '../../errors/domain-error.js';
import { ancestor, appendXml, elementChildren, firstChild, firstDescendant, is, serializeFragment, type Element } from './dom.js';
import type { PreparedField } from './fields.js';
import { textRunContent } from './xml-text.js';

/**
 * Fills a table from a content control that wraps it or sits inside it. The first data row
 * (the row holding the control, else the first row after the header) is the model: each value row
 * is a copy of it with one value per cell; header rows and rows after the model stay.
 */
function tableRows(table: Element): Element[] {
  const rows: Element[] = [];
  for (const child of elementChildren(table)) {
    if (is(child, 'w:tr')) rows.push(child);
    else if (is(child, 'w:sdt')) rows.push(...elementChildren(firstChild(child, 'w:sdtContent') ?? child, 'w:tr'));
  }
  return rows;
}

function isHeaderRow(row: Element): boolean {
  const props = firstChild(row, 'w:trPr');
  return !!props && !!firstChild(props, 'w:tblHeader');
}

function modelRow(sdt: Element, content: Element, table: Element): Element {
  const wrapped = firstChild(content, 'w:tr');
  if (wrapped) return wrapped;
  const holder = ancestor(sdt, 'w:tr', table);
  if (holder && ancestor(holder, 'w:tbl') === table) return holder;
  const rows = tableRows(table);
  let headers = 0;
  while (headers < rows.length && isHeaderRow(rows[headers])) headers++;
  if (headers === 0 && rows.length > 1) headers = 1;
  return rows[Math.min(headers, rows.length - 1)];
}

const STYLE_ONLY_CELL_PROPS = ['w:shd', 'w:tcBorders'];

function strip(props: Element | null, names: string[]): void {
  for (const child of props ? elementChildren(props) : []) if (names.some((name) => is(child, name))) props!.removeChild(child);
}

function fillCell(cell: Element, text: string, copyStyle: boolean): void {
  const paragraph = firstDescendant(cell, 'w:p');
  const paragraphProps = paragraph ? firstChild(paragraph, 'w:pPr') : null;
  const run = paragraph ? elementChildren(paragraph).find((c) => is(c, 'w:r') && firstChild(c, 'w:rPr')) : undefined;
  const runProps = copyStyle && run ? serializeFragment(firstChild(run, 'w:rPr')!) : '';
  const pPr = paragraphProps ? serializeFragment(paragraphProps) : '';
  for (const child of elementChildren(cell)) if (!is(child, 'w:tcPr')) cell.removeChild(child);
  if (!copyStyle) strip(firstChild(cell, 'w:tcPr'), STYLE_ONLY_CELL_PROPS);
  appendXml(cell, `<w:p>${pPr}<w:r>${runProps}${textRunContent(text)}</w:r></w:p>`);
}

export function assertRowShapes(name: string, rows: string[][], cellCount: number): void {
  const bad = rows.map((row, index) => ({ row, index })).filter(({ row }) => row.length !== cellCount);
  if (bad.length === 0) return;
  throw new DomainError(ErrorCode.TABLE_SHAPE_MISMATCH,
    `Table field "${name}": the template row has ${cellCount} cells but ${bad.length} value row(s) do not; send exactly ${cellCount} values per row.`,
    { details: bad.slice(0, 20).map(({ row, index }) => ({ field: `${name}[${index}]`, issue: `has ${row.length} cells, expected ${cellCount}` })) });
}

export function fillTable(sdt: Element, content: Element, field: PreparedField): void {
  const table = firstDescendant(content, 'w:tbl') ?? ancestor(sdt, 'w:tbl');
  if (!table) {
    throw new DomainError(ErrorCode.CONTROL_NOT_IN_TABLE,
      `Table field "${field.name}": its content control neither wraps nor sits in a table; put the control around or inside the table to fill.`);
  }
  const model = modelRow(sdt, content, table);
  const cells = elementChildren(model, 'w:tc');
  assertRowShapes(field.name, field.rows, cells.length);
  const copyStyle = field.options.copyRowStyle !== false;
  for (const values of field.rows) {
    const row = model.cloneNode(true) as Element;
    if (!copyStyle) strip(firstChild(row, 'w:trPr'), ['w:tblHeader', 'w:shd']);
    elementChildren(row, 'w:tc').forEach((cell, i) => fillCell(cell, values[i], copyStyle));
    model.parentNode!.insertBefore(row, model);
  }
  model.parentNode!.removeChild(model);
}
