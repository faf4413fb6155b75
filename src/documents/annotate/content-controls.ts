import { cellWidthTwips, EMU_PER_TWIP, fitInside, imageExtent, isSvgBlipExtension, svgBlipExtension } from './drawing.js';
import {
  ancestor, appendXml, createElement, descendants, elementChildren, firstChild, firstDescendant, fragment, is, isAttached,
  parseXml, R_NS, removeChildren, serializeFragment, serializeNode, serializeXml, wVal, type Document, type Element,
} from './dom.js';
import type { MediaRegistry } from './media.js';
import type { PreparedField } from './fields.js';
import { fillTable } from './sdt-table.js';
import { PreparedVisual, visualRuns, type PlacementContext } from './visuals.js';
import { textRunContent } from './xml-text.js';

/**
 * Fills Word content controls (w:sdt) whose tag or title (alias) names a field, in every story
 * part (body, headers, footers, notes; text boxes live inside those parts).
 */
export interface ContentControlContext {
  media: MediaRegistry;
  pageTextWidthTwips: number;
}

type Level = 'run' | 'block' | 'cell' | 'row';

/** SuperDoc's editor saves a field's identity as JSON in the tag: fieldId, group and displayLabel name it. */
const SUPERDOC_TAG_KEYS = ['fieldId', 'group', 'displayLabel'] as const;

function superdocTagNames(tag: string): string[] {
  if (!tag.trimStart().startsWith('{')) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(tag);
  } catch {
    return [];
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return [];
  return SUPERDOC_TAG_KEYS.map((key) => (parsed as Record<string, unknown>)[key]).filter((name): name is string => typeof name === 'string' && name !== '');
}

/** The names a control answers to: its tag (or, for a JSON tag, the names in it) and its title. */
export function controlNames(sdt: Element): string[] {
  const props = firstChild(sdt, 'w:sdtPr');
  if (!props) return [];
  const tag = wVal(firstChild(props, 'w:tag'));
  const alias = wVal(firstChild(props, 'w:alias'));
  return [...(tag ? [tag, ...superdocTagNames(tag)] : []), ...(alias ? [alias] : [])];
}

const BLOCK_CONTAINERS = ['w:body', 'w:tc', 'w:txbxContent', 'w:hdr', 'w:ftr', 'w:footnote', 'w:endnote', 'w:sdtContent', 'w:comment'];

function levelOf(sdt: Element, content: Element): Level {
  const children = elementChildren(content);
  const has = (name: string) => children.some((child) => is(child, name));
  if (has('w:tr')) return 'row';
  if (has('w:tc')) return 'cell';
  if (has('w:p') || has('w:tbl')) return 'block';
  return BLOCK_CONTAINERS.some((name) => is(sdt.parentNode, name)) ? 'block' : 'run';
}

function contentOf(sdt: Element): Element {
  const existing = firstChild(sdt, 'w:sdtContent');
  if (existing) return existing;
  const created = createElement(sdt.ownerDocument!, 'w:sdtContent');
  sdt.appendChild(created);
  return created;
}

/** The control now holds real content: drop the "showing placeholder" state. */
function clearPlaceholderState(sdt: Element): void {
  const props = firstChild(sdt, 'w:sdtPr');
  for (const flag of props ? elementChildren(props, 'w:showingPlcHdr') : []) props!.removeChild(flag);
}

/** Run properties the filled text should keep: the first run's, else the control's own. */
function runPropsXml(sdt: Element, content: Element): string {
  const run = descendants(content, 'w:r').find((r) => firstChild(r, 'w:rPr'));
  const props = run ? firstChild(run, 'w:rPr') : firstChild(firstChild(sdt, 'w:sdtPr') ?? sdt, 'w:rPr');
  if (!props) return '';
  const copy = props.cloneNode(true) as Element;
  for (const style of elementChildren(copy, 'w:rStyle')) {
    if (/placeholder/i.test(wVal(style) ?? '')) copy.removeChild(style);
  }
  return serializeFragment(copy);
}

function paragraphPropsXml(container: Element): string {
  const paragraph = firstDescendant(container, 'w:p');
  const props = paragraph ? firstChild(paragraph, 'w:pPr') : null;
  return props ? serializeFragment(props) : '';
}

function availableWidthTwips(sdt: Element, fallback: number): number {
  const cell = ancestor(sdt, 'w:tc');
  const props = cell ? firstChild(cell, 'w:tcPr') : null;
  return (props && cellWidthTwips(serializeNode(props))) || fallback;
}

/** Replaces the control's content with `runsXml`, wrapped as its level requires. */
function placeRuns(sdt: Element, runsXml: string, level: Level): void {
  const content = contentOf(sdt);
  if (level === 'run') {
    const pieces = fragment(sdt.ownerDocument!, runsXml);
    removeChildren(content);
    for (const piece of pieces) content.appendChild(piece);
    return;
  }
  const target = level === 'block' ? content : firstDescendant(content, 'w:tc');
  if (!target) return;
  const paragraph = `<w:p>${paragraphPropsXml(target)}${runsXml}</w:p>`;
  if (level === 'block') {
    removeChildren(content);
    appendXml(content, paragraph);
    return;
  }
  for (const child of elementChildren(target)) if (!is(child, 'w:tcPr')) target.removeChild(child);
  appendXml(target, paragraph);
}

function fillText(sdt: Element, text: string, keepStyles: boolean): void {
  const content = contentOf(sdt);
  const level = levelOf(sdt, content);
  const runProps = keepStyles ? runPropsXml(sdt, content) : '';
  placeRuns(sdt, `<w:r>${runProps}${textRunContent(text)}</w:r>`, level);
  clearPlaceholderState(sdt);
}

/** Points the blip at the new picture; an SVG extension left from the template's picture goes. */
function setBlipImage(blip: Element, embedded: { rId: string; svgRId?: string }): void {
  blip.setAttributeNS(R_NS, 'r:embed', embedded.rId);
  for (const list of elementChildren(blip, 'a:extLst')) {
    for (const ext of elementChildren(list, 'a:ext')) if (isSvgBlipExtension(ext.getAttribute('uri'))) list.removeChild(ext);
    if (elementChildren(list).length === 0) blip.removeChild(list);
  }
  if (embedded.svgRId) appendXml(blip, svgBlipExtension(embedded.svgRId));
}

/** A picture content control keeps its frame: swap the picture and fit it in the frame. */
function replacePicture(sdt: Element, visual: PreparedVisual, context: PlacementContext): boolean {
  const drawing = firstDescendant(contentOf(sdt), 'w:drawing');
  const blip = drawing ? firstDescendant(drawing, 'a:blip') : null;
  const extentElement = drawing ? firstDescendant(drawing, 'wp:extent') : null;
  if (!drawing || !blip || !extentElement || !visual.image) return false;
  const box = { cx: Number(extentElement.getAttribute('cx')), cy: Number(extentElement.getAttribute('cy')) };
  const size = visual.options.dimensions || !(box.cx > 0 && box.cy > 0)
    ? imageExtent(visual.image, visual.options.dimensions, context.maxWidthTwips * EMU_PER_TWIP, visual.where)
    : fitInside(visual.image, box);
  setBlipImage(blip, context.media.embed(context.partPath, visual.image));
  extentElement.setAttribute('cx', String(size.cx));
  extentElement.setAttribute('cy', String(size.cy));
  const shapeExtent = firstDescendant(drawing, 'pic:spPr');
  const ext = shapeExtent ? firstDescendant(shapeExtent, 'a:ext') : null;
  ext?.setAttribute('cx', String(size.cx));
  ext?.setAttribute('cy', String(size.cy));
  return true;
}

function fillVisual(sdt: Element, visual: PreparedVisual, partPath: string, context: ContentControlContext): void {
  const content = contentOf(sdt);
  const level = levelOf(sdt, content);
  const placement: PlacementContext = {
    partPath,
    media: context.media,
    maxWidthTwips: availableWidthTwips(sdt, context.pageTextWidthTwips),
    runProps: '',
  };
  if (!(visual.kind === 'image' && replacePicture(sdt, visual, placement))) {
    placeRuns(sdt, visualRuns(visual, placement), level);
  }
  clearPlaceholderState(sdt);
}

function fillControl(sdt: Element, field: PreparedField, partPath: string, context: ContentControlContext): void {
  if (field.type === 'table') {
    fillTable(sdt, contentOf(sdt), field);
    clearPlaceholderState(sdt);
  } else if (field.visual) {
    fillVisual(sdt, field.visual, partPath, context);
  } else {
    fillText(sdt, field.text, field.options.keepTextNodeStyles !== false);
  }
}

/** Fills matching controls of one part; returns the new XML (or null if untouched) and matched names. */
export function fillContentControls(
  xml: string,
  partPath: string,
  fields: Map<string, PreparedField>,
  context: ContentControlContext,
): { xml: string | null; matched: Set<string>; namedControls: number } {
  const matched = new Set<string>();
  // Cheap pre-check on the text: a control element in any prefix.
  if (!/<(?:[\w.-]+:)?sdt[\s/>]/.test(xml)) return { xml: null, matched, namedControls: 0 };
  const doc: Document = parseXml(xml);
  const controls = descendants(doc, 'w:sdt');
  let namedControls = 0;
  for (const sdt of controls) {
    if (!isAttached(sdt)) continue;
    const names = controlNames(sdt);
    if (names.length) namedControls++;
    const name = names.find((candidate) => fields.has(candidate));
    if (!name) continue;
    fillControl(sdt, fields.get(name)!, partPath, context);
    matched.add(name);
  }
  return { xml: matched.size ? serializeXml(doc) : null, matched, namedControls };
}
