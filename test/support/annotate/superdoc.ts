/**
 * Content controls as SuperDoc's editor saves its fields: the field's identity as JSON in w:tag,
 * its label as the title (w:alias), and `{{Label}}` as the text shown until it is filled.
 */
export interface SuperdocFieldAttrs {
  fieldId?: string;
  group?: string;
  fieldTypeShort?: string;
  displayLabel?: string;
  fieldColor?: string;
}

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** The w:tag element as it appears in the saved XML. */
export const superdocTag = (attrs: SuperdocFieldAttrs) => `<w:tag w:val="${escapeAttribute(JSON.stringify(attrs))}"/>`;

let nextId = 1000;

/** A run-level field control; `label` defaults to the displayLabel (or the group). */
export function superdocControl(attrs: SuperdocFieldAttrs, label = attrs.displayLabel ?? attrs.group ?? attrs.fieldId ?? 'Field'): string {
  const shown = `{{${label}}}`;
  return `<w:sdt><w:sdtPr><w:alias w:val="${escapeAttribute(label)}"/>${superdocTag(attrs)}<w:id w:val="${nextId++}"/></w:sdtPr>` +
    `<w:sdtContent><w:r><w:rPr><w:color w:val="${(attrs.fieldColor ?? '#980043').replace('#', '')}"/></w:rPr><w:t xml:space="preserve">${shown}</w:t></w:r></w:sdtContent></w:sdt>`;
}

/** A block-level control (a paragraph of its own), as the editor saves fields on their own line. */
export function superdocBlockControl(attrs: SuperdocFieldAttrs, label = attrs.displayLabel ?? attrs.group ?? 'Field'): string {
  return `<w:sdt><w:sdtPr><w:alias w:val="${escapeAttribute(label)}"/>${superdocTag(attrs)}</w:sdtPr>` +
    `<w:sdtContent><w:p><w:r><w:t xml:space="preserve">{{${label}}}</w:t></w:r></w:p></w:sdtContent></w:sdt>`;
}

/** A block-level control around a table: header row, then the model row the values copy. */
export function superdocTableControl(attrs: SuperdocFieldAttrs, tableXml: string): string {
  return `<w:sdt><w:sdtPr>${superdocTag(attrs)}</w:sdtPr><w:sdtContent>${tableXml}</w:sdtContent></w:sdt>`;
}
