import type { NumberFormat } from './types.js';
import { NS, XML_DECLARATION } from '../ooxml/constants.js';

/**
 * numbering.xml builder. Every list gets its own abstract definition and w:num, so every
 * list restarts at its own `start` (Word would otherwise continue numbering across lists
 * sharing a num) and nested lists number independently of their parents. The blocks after the
 * first in a list item are numbered paragraphs too, with a numbering that shows no number
 * (Word's own way of continuing an item), so readers keep them in their item at its level.
 */
export const MAX_LIST_LEVELS = 9;
const INDENT_STEP = 720;
const HANGING = 360;

const BULLETS = ['\u2022', '\u25E6', '\u25AA'] as const;

export function listIndent(level: number): { left: number; hanging: number } {
  return { left: INDENT_STEP * (level + 1), hanging: HANGING };
}

interface ListDefinition {
  ordered: boolean;
  /** Level at which the list's items sit, its start number and numbering there. */
  level: number;
  start: number;
  format: NumberFormat;
}

function levelXml(def: ListDefinition, ilvl: number): string {
  const { left, hanging } = listIndent(ilvl);
  const start = ilvl === def.level ? def.start : 1;
  const ind = `<w:pPr><w:ind w:left="${left}" w:hanging="${hanging}"/></w:pPr>`;
  if (def.ordered) {
    const fmt = ilvl === def.level ? def.format : 'decimal';
    return (
      `<w:lvl w:ilvl="${ilvl}"><w:start w:val="${start}"/><w:numFmt w:val="${fmt}"/>` +
      `<w:lvlText w:val="%${ilvl + 1}."/><w:lvlJc w:val="left"/>${ind}</w:lvl>`
    );
  }
  const bullet = BULLETS[ilvl % BULLETS.length];
  return (
    `<w:lvl w:ilvl="${ilvl}"><w:start w:val="1"/><w:numFmt w:val="bullet"/><w:lvlText w:val="${bullet}"/>` +
    `<w:lvlJc w:val="left"/>${ind}<w:rPr><w:rFonts w:ascii="Arial" w:hAnsi="Arial" w:cs="Arial" w:hint="default"/></w:rPr></w:lvl>`
  );
}

/** The numbering of an item's later blocks: no number, the item's text indent at every level. */
function continuationXml(abstractNumId: number): string {
  const levels = Array.from({ length: MAX_LIST_LEVELS }, (_, ilvl) =>
    `<w:lvl w:ilvl="${ilvl}"><w:start w:val="1"/><w:numFmt w:val="none"/><w:suff w:val="nothing"/><w:lvlText w:val=""/>` +
    `<w:lvlJc w:val="left"/><w:pPr><w:ind w:left="${listIndent(ilvl).left}" w:firstLine="0"/></w:pPr></w:lvl>`).join('');
  return `<w:abstractNum w:abstractNumId="${abstractNumId}"><w:multiLevelType w:val="multilevel"/>${levels}</w:abstractNum>`;
}

/** w:numId 1 is the item continuation; lists are numbered from 2 (abstract ids from 1). */
const CONTINUATION_ID = 1;

export class NumberingRegistry {
  private readonly lists: ListDefinition[] = [];
  private continued = false;

  /** Registers a list and returns its w:numId. */
  add(ordered: boolean, level: number, start: number, format: NumberFormat = 'decimal'): number {
    this.lists.push({ ordered, level, start: Math.max(0, Math.floor(start)), format });
    return this.lists.length + CONTINUATION_ID;
  }

  /** The w:numId of the item-continuation numbering (one per document). */
  continuation(): number {
    this.continued = true;
    return CONTINUATION_ID;
  }

  toXml(): string {
    const abstracts: string[] = [];
    const nums: string[] = [];
    if (this.continued) {
      abstracts.push(continuationXml(0));
      nums.push(`<w:num w:numId="${CONTINUATION_ID}"><w:abstractNumId w:val="0"/></w:num>`);
    }
    // Lists with the same kind, level, start and numbering have the same levels: built once.
    const built = new Map<string, string>();
    this.lists.forEach((def, index) => {
      const key = `${def.ordered}|${def.level}|${def.start}|${def.format}`;
      let levels = built.get(key);
      if (levels === undefined) {
        levels = Array.from({ length: MAX_LIST_LEVELS }, (_, ilvl) => levelXml(def, ilvl)).join('');
        built.set(key, levels);
      }
      const abstractId = index + 1;
      abstracts.push(
        `<w:abstractNum w:abstractNumId="${abstractId}"><w:multiLevelType w:val="hybridMultilevel"/>${levels}</w:abstractNum>`,
      );
      const overrides = `<w:lvlOverride w:ilvl="${def.level}"><w:startOverride w:val="${def.start}"/></w:lvlOverride>`;
      nums.push(`<w:num w:numId="${abstractId + CONTINUATION_ID}"><w:abstractNumId w:val="${abstractId}"/>${def.ordered ? overrides : ''}</w:num>`);
    });
    return (
      `${XML_DECLARATION}<w:numbering xmlns:w="${NS.wordprocessingml}">` +
      `${abstracts.join('')}${nums.join('')}</w:numbering>`
    );
  }
}
