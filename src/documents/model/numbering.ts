import { XML_DECLARATION } from './xml.js';

/**
 * numbering.xml builder. Every list gets its own abstract definition and w:num, so every
 * list restarts at its own `start` (Word would otherwise continue numbering across lists
 * sharing a num) and nested lists number independently of their parents.
 */
export const MAX_LIST_LEVELS = 9;
const INDENT_STEP = 720;
const HANGING = 360;

const ORDERED_FORMATS = ['decimal', 'lowerLetter', 'lowerRoman'] as const;
const BULLETS = ['\u2022', '\u25E6', '\u25AA'] as const;

export function listIndent(level: number): { left: number; hanging: number } {
  return { left: INDENT_STEP * (level + 1), hanging: HANGING };
}

interface ListDefinition {
  ordered: boolean;
  /** Level at which the list's items sit, and its start number there. */
  level: number;
  start: number;
}

function levelXml(def: ListDefinition, ilvl: number): string {
  const { left, hanging } = listIndent(ilvl);
  const start = ilvl === def.level ? def.start : 1;
  const ind = `<w:pPr><w:ind w:left="${left}" w:hanging="${hanging}"/></w:pPr>`;
  if (def.ordered) {
    const fmt = ORDERED_FORMATS[ilvl % ORDERED_FORMATS.length];
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

export class NumberingRegistry {
  private readonly lists: ListDefinition[] = [];

  /** Registers a list and returns its w:numId (1-based). */
  add(ordered: boolean, level: number, start: number): number {
    this.lists.push({ ordered, level, start: Math.max(0, Math.floor(start)) });
    return this.lists.length;
  }

  get isEmpty(): boolean {
    return this.lists.length === 0;
  }

  toXml(): string {
    const abstracts: string[] = [];
    const nums: string[] = [];
    this.lists.forEach((def, index) => {
      const levels = Array.from({ length: MAX_LIST_LEVELS }, (_, ilvl) => levelXml(def, ilvl)).join('');
      abstracts.push(
        `<w:abstractNum w:abstractNumId="${index}"><w:multiLevelType w:val="hybridMultilevel"/>${levels}</w:abstractNum>`,
      );
      const overrides = `<w:lvlOverride w:ilvl="${def.level}"><w:startOverride w:val="${def.start}"/></w:lvlOverride>`;
      nums.push(`<w:num w:numId="${index + 1}"><w:abstractNumId w:val="${index}"/>${def.ordered ? overrides : ''}</w:num>`);
    });
    return (
      `${XML_DECLARATION}<w:numbering xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">` +
      `${abstracts.join('')}${nums.join('')}</w:numbering>`
    );
  }
}
