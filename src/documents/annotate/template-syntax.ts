import type { OpcPackage } from '../ooxml/package.js';
import { ErrorCode, DomainError } from '../../errors/domain-error.js';
import { controlNames } from './content-controls.js';
import { unreadablePart } from './template-errors.js';
import { ancestor, descendants, parseXml, serializeXml, type Element } from './dom.js';

/**
 * What the template text says before docxtemplater reads it:
 * - SuperDoc's editor shows a field as a content control holding `{{Field Label}}`: that text is a
 *   placeholder, not a tag, so its braces are hidden from docxtemplater (and put back afterwards);
 * - other template languages' tags are named in a 422 instead of failing as docxtemplater syntax
 *   errors or, worse, rendering as text.
 */

const OPEN = '\uE000';
const CLOSE = '\uE001';
const DOUBLE_BRACE_PLACEHOLDER = /\{\{[^{}]*\}\}/;

interface ForeignLanguage {
  id: string;
  name: string;
  pattern: RegExp;
}

const FOREIGN_LANGUAGES: ForeignLanguage[] = [
  { id: 'jinja', name: 'Jinja / python-docx-template (also Mustache-style {{ }})', pattern: /\{\{[^{}]*\}\}|\{%[^%]*%\}/ },
  { id: 'docx-templates', name: 'docx-templates (+++ +++ commands)', pattern: /\+\+\+[^+]*\+\+\+/ },
];

/** Cheap test on a whole part: could any paragraph hold `{{`, `{%` or `+++`? */
const CANDIDATE = /\{\s*[{%]|\+\s*\+\s*\+/;

/** The text of a paragraph's own runs (text in nested text boxes belongs to their own paragraphs). */
function ownTextNodes(paragraph: Element): Element[] {
  return descendants(paragraph, 'w:t').filter((t) => ancestor(t, 'w:p') === paragraph);
}

const textOf = (nodes: Element[]) => nodes.map((t) => t.textContent ?? '').join('');

export interface ForeignTag {
  language: string;
  name: string;
  part: string;
  text: string;
}

export interface TemplateTextScan {
  /** Puts the hidden placeholder braces back (call after docxtemplater has rendered). */
  restore(pkg: OpcPackage): void;
  foreign: ForeignTag[];
}

function hideBraces(t: Element): void {
  for (let child = t.firstChild; child; child = child.nextSibling) {
    if (child.nodeType !== 3 && child.nodeType !== 4) continue;
    const text = child as unknown as { data: string; nodeValue: string | null };
    text.data = text.data.replaceAll('{', OPEN).replaceAll('}', CLOSE);
    text.nodeValue = text.data;
  }
}

/** Scans the story parts (part names, e.g. "/word/document.xml") of `pkg`, hiding placeholder braces in it. */
export function scanTemplateText(pkg: OpcPackage, storyParts: string[]): TemplateTextScan {
  const hidden: string[] = [];
  const foreign: ForeignTag[] = [];
  for (const partName of storyParts) {
    const part = partName.slice(1);
    const xml = pkg.text(partName);
    // Most parts hold neither "{{", "{%" nor "+++": skip them without copying the text out of the markup.
    if (!xml.includes('+') && !/\{[^{%]*[{%]/.test(xml)) continue;
    if (!CANDIDATE.test(xml.replace(/<[^<>]*>/g, ''))) continue;
    let doc: ReturnType<typeof parseXml>;
    try {
      doc = parseXml(xml);
    } catch (error) {
      throw unreadablePart(part, error);
    }
    const canHide = !xml.includes(OPEN) && !xml.includes(CLOSE);
    let changed = false;
    for (const control of descendants(doc, 'w:sdt')) {
      const texts = descendants(control, 'w:t');
      if (!canHide || !controlNames(control).length || !DOUBLE_BRACE_PLACEHOLDER.test(textOf(texts))) continue;
      texts.forEach(hideBraces);
      changed = true;
    }
    for (const paragraph of descendants(doc, 'w:p')) {
      const text = textOf(ownTextNodes(paragraph));
      for (const language of FOREIGN_LANGUAGES) {
        const match = language.pattern.exec(text);
        if (match) foreign.push({ language: language.id, name: language.name, part, text: match[0] });
      }
    }
    if (changed) {
      pkg.setText(partName, serializeXml(doc));
      hidden.push(partName);
    }
  }
  return {
    foreign,
    restore(target) {
      for (const partName of hidden) {
        if (target.has(partName)) target.setText(partName, target.text(partName).replaceAll(OPEN, '{').replaceAll(CLOSE, '}'));
      }
    },
  };
}

/** 422 naming the template language(s) found, with where. */
export function foreignTemplateLanguage(found: ForeignTag[]) {
  const languages = [...new Set(found.map((tag) => tag.name))];
  const examples = found.slice(0, 3).map((tag) => `"${tag.text.slice(0, 60)}" in ${tag.part}`).join(', ');
  return new DomainError(ErrorCode.TEMPLATE_INVALID,
    `The template is written for ${languages.join(' and ')}, which docproc does not fill (found ${examples}). ` +
    'docproc fills docxtemplater tags ({name}, {#items}…{/items}, {%image}, {@raw}) and Word content controls; rewrite the tags in that syntax.',
    {
      extensions: { templateLanguages: [...new Set(found.map((tag) => tag.language))], errors: found.map((tag) => ({ id: 'foreign_template_language', tag: tag.text, explanation: `${tag.name} syntax`, part: tag.part, offset: null })) },
      details: found.map((tag) => ({ field: tag.part, issue: `${tag.name}: ${tag.text.slice(0, 100)}` })),
    });
}
