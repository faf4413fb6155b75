import Docxtemplater from 'docxtemplater';
import { DomainError, ErrorCode, validationError } from '../../errors/domain-error.js';
import { OpcPackage } from '../ooxml/package.js';
import { fillContentControls } from './content-controls.js';
import { pageTextWidthTwips } from './drawing.js';
import { rootIdentifier } from './expressions.js';
import { prepareFields, type PreparedField } from './fields.js';
import { createEndnotesModule } from './endnotes-module.js';
import { createImageModule } from './image-module.js';
import { MediaRegistry } from './media.js';
import { assertRowShapes } from './sdt-table.js';
import { createTagParser } from './tag-parser.js';
import { countTemplateWork } from './template-budget.js';
import { appErrorInside, isTemplateError, templateInvalid, unreadablePart } from './template-errors.js';
import { foreignTemplateLanguage, scanTemplateText } from './template-syntax.js';
import { templaterZip } from './templater-zip.js';
import type { AnnotateInput, AnnotateResult } from './types.js';
import { warning, type Warning } from '../warnings.js';

/** Parts that hold document text: body, headers, footers, foot/endnotes (text boxes are inside them). */
const STORY_PART = /^\/word\/(document\d*|header\d+|footer\d+|footnotes|endnotes)\.xml$/;

type CompiledPart = { type: string; value: string; module?: string; tag?: string; position?: string; subparsed?: CompiledPart[] };

function walkParts(parts: CompiledPart[], visit: (part: CompiledPart) => void): void {
  for (const part of parts) {
    visit(part);
    if (part.subparsed) walkParts(part.subparsed, visit);
  }
}

function compiledParts(doc: Docxtemplater): CompiledPart[][] {
  const compiled = (doc as unknown as { compiled: Record<string, { postparsed?: CompiledPart[] }> }).compiled;
  return Object.values(compiled).map((file) => file.postparsed ?? []);
}

/** Names the template's tags refer to: whole expressions and their first identifier. */
function templateTagNames(doc: Docxtemplater): Set<string> {
  const names = new Set<string>();
  for (const parts of compiledParts(doc)) {
    walkParts(parts, (part) => {
      if (part.type !== 'placeholder') return;
      names.add(part.value.trim());
      const root = rootIdentifier(part.value);
      if (root) names.add(root);
    });
  }
  return names;
}

/** Cells of a row loop's template row (w:tc at the row's own level, nested tables ignored). */
function rowLoopCellCount(loop: CompiledPart): number | null {
  let rows = 0;
  let tables = 0;
  let cells = 0;
  walkParts(loop.subparsed ?? [], (part) => {
    if (part.type !== 'tag') return;
    const delta = part.position === 'start' ? 1 : part.position === 'end' ? -1 : 0;
    if (part.tag === 'w:tbl') tables += delta;
    if (part.tag === 'w:tr' && tables === 0) rows += Math.max(0, delta);
    if (part.tag === 'w:tc' && tables === 0 && part.position === 'start') cells++;
  });
  return rows === 1 ? cells : null;
}

function checkTableLoops(doc: Docxtemplater, fields: Map<string, PreparedField>): void {
  for (const parts of compiledParts(doc)) {
    walkParts(parts, (part) => {
      const field = part.module === 'loop' ? fields.get(part.value.trim()) : undefined;
      if (field?.type !== 'table') return;
      const cells = rowLoopCellCount(part);
      if (cells !== null) assertRowShapes(field.name, field.rows, cells);
    });
  }
}

/** Row scope for `{#table}…{/table}` loops: cells as {c0}, {c1}, … (and the array as {cells}). */
function rowScope(row: string[]): Record<string, unknown> {
  const scope: Record<string, unknown> = { cells: row };
  row.forEach((cell, i) => (scope[`c${i}`] = cell));
  return scope;
}

function templateData(data: Record<string, unknown>, fields: Map<string, PreparedField>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...data };
  for (const field of fields.values()) {
    merged[field.name] = field.type === 'text' ? field.text : field.type === 'table' ? field.rows.map(rowScope) : field.visual;
  }
  return merged;
}

function rethrow(error: unknown): never {
  if (error instanceof DomainError) throw error;
  const raisedByValue = appErrorInside(error);
  if (raisedByValue) throw raisedByValue;
  if (isTemplateError(error)) throw templateInvalid(error);
  const message = (error as Error)?.message ?? String(error);
  throw new DomainError(ErrorCode.UNPROCESSABLE_DOCUMENT, `The template could not be filled: ${message}`, { cause: error });
}

/**
 * Fills a DOCX template with fields (docxtemplater tags and Word content controls) and free-form data.
 * SVG images need `await loadSvgRenderer()` once before (the worker task does it).
 * Throws DomainError: 400/413/422 for bad input (not a DOCX, bad field, bad image, table shape),
 * 422 TEMPLATE_INVALID (all template errors), FIELD_NOT_FOUND, MISSING_VALUES (strict).
 */
export function annotateDocx(input: AnnotateInput): AnnotateResult {
  // The one ZIP reader refuses what is not a DOCX, zip bombs and ambiguous packages before anything else.
  const pkg = OpcPackage.open(input.template);
  if (input.data !== undefined && (input.data === null || typeof input.data !== 'object' || Array.isArray(input.data))) {
    throw validationError('"data" must be a JSON object.', [{ field: 'data', issue: 'expected an object' }]);
  }
  const warnings: Warning[] = [];
  const images = input.images ?? {};
  const fields = prepareFields(input.fields ?? [], images, warnings);
  const media = new MediaRegistry(pkg);
  const pageWidth = pageTextWidthTwips(pkg.text('/word/document.xml'));
  const missing = new Set<string>();
  const storyParts = pkg.partNames().filter((name) => STORY_PART.test(name));
  const textScan = scanTemplateText(pkg, storyParts);
  if (textScan.foreign.length) throw foreignTemplateLanguage(textScan.foreign);
  const valueWarnings = new Map<string, string>();
  const zip = templaterZip(pkg);

  let doc: Docxtemplater;
  try {
    doc = new Docxtemplater(zip, {
      paragraphLoop: true,
      linebreaks: true,
      stripInvalidXMLChars: true,
      errorLogging: false,
      parser: createTagParser((message, tag) => valueWarnings.set(message, tag)),
      modules: [createImageModule({ media, pageTextWidthTwips: pageWidth, images, missing }), createEndnotesModule()],
      nullGetter(part) {
        if (!part.module) missing.add(part.value);
        return '';
      },
    });
  } catch (error) {
    rethrow(error);
  }
  const tagNames = templateTagNames(doc);
  checkTableLoops(doc, fields);
  const data = templateData(input.data ?? {}, fields);
  countTemplateWork(compiledParts(doc), data, createTagParser(() => undefined));
  try {
    doc.render(data);
  } catch (error) {
    rethrow(error);
  }

  zip.copyChangesTo(pkg);
  textScan.restore(pkg);

  const matched = new Set([...fields.keys()].filter((name) => tagNames.has(name)));
  let namedControls = 0;
  for (const partName of storyParts) {
    const partPath = partName.slice(1);
    let result: ReturnType<typeof fillContentControls>;
    try {
      result = fillContentControls(pkg.text(partName), partPath, fields, { media, pageTextWidthTwips: pageWidth });
    } catch (error) {
      if (error instanceof DomainError) throw error;
      throw unreadablePart(partPath, error);
    }
    if (result.xml !== null) pkg.setText(partName, result.xml);
    result.matched.forEach((name) => matched.add(name));
    namedControls += result.namedControls;
  }
  valueWarnings.forEach((tag, message) => warnings.push(warning('VALUE_FORMAT', message, tag)));

  if (tagNames.size === 0 && namedControls === 0) {
    const message = 'The template has no tags ({name}) and no named content controls: there is nothing to fill.';
    if (input.options?.strict) {
      throw new DomainError(ErrorCode.TEMPLATE_INVALID, `${message} Add tags or content controls, or turn off strict.`, {
        extensions: { errors: [{ id: 'no_tags', tag: null, explanation: message, part: null, offset: null }] },
      });
    }
    warnings.push(warning('TEMPLATE_HAS_NO_TAGS', `${message} The document was returned unchanged.`));
  }

  const unknown = [...fields.keys()].filter((name) => !matched.has(name));
  if (unknown.length && !input.options?.ignoreUnknownFields) {
    throw new DomainError(ErrorCode.FIELD_NOT_FOUND,
      `No tag or content control in the template matches field(s) ${unknown.map((n) => `"${n}"`).join(', ')}; fix the ids or set ignoreUnknownFields.`,
      { details: unknown.map((name) => ({ field: name, issue: 'matches no tag or content control' })), extensions: { fields: unknown } });
  }
  unknown.forEach((name) => warnings.push(warning('FIELD_UNKNOWN', `Field "${name}" matches no tag or content control and was ignored.`, name)));
  if (missing.size && input.options?.strict) {
    throw new DomainError(ErrorCode.MISSING_VALUES,
      `The template has tag(s) without a value: ${[...missing].map((n) => `{${n}}`).join(', ')}; send values for them or turn off strict.`,
      { details: [...missing].map((name) => ({ field: name, issue: 'no value given' })), extensions: { tags: [...missing] } });
  }
  missing.forEach((name) => warnings.push(warning('TAG_EMPTY', `Tag {${name}} had no value and was left empty.`, name)));
  media.flush();
  return { docx: pkg.write(), warnings };
}
