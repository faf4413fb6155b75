import PizZip from 'pizzip';

/**
 * Generated documents with tracked changes, and the same documents made with every change
 * accepted or rejected in advance (built from the model, not by our resolver): the pairs the
 * accept/reject tests compare. Seeded, so a failure can be reproduced.
 */
export type SegmentKind = 'plain' | 'ins' | 'del' | 'moveFrom' | 'moveTo' | 'format';
export interface Segment {
  kind: SegmentKind;
  text: string;
}
export interface Paragraph {
  segments: Segment[];
  /** The paragraph mark itself inserted or deleted (the paragraph joins the next one when it goes). */
  mark: 'plain' | 'ins' | 'del';
}
export interface Row {
  cells: string[];
  kind: 'plain' | 'ins' | 'del';
}
export interface TrackedModel {
  rtl: boolean;
  body: (Paragraph | { rows: Row[] })[];
  header: Segment[];
  footnote: Segment[];
}

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function seededRandom(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
}

const LATIN = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango'.split(' ');
const ARABIC = 'السلام عليكم كتاب مدرسة طالب معلم بيت شمس قمر بحر جبل نهر مدينة سماء شجرة وردة قلم ورقة باب نافذة'.split(' ');

/** A model with about `changes` tracked changes of every kind, spread over `paragraphs` paragraphs and a table. */
export function trackedModel(options: { seed: number; rtl: boolean; paragraphs: number; changesPerParagraph: number }): TrackedModel {
  const random = seededRandom(options.seed);
  const words = options.rtl ? ARABIC : LATIN;
  const word = () => words[Math.floor(random() * words.length)]!;
  const phrase = (n: number) => Array.from({ length: n }, word).join(' ');
  const kinds: SegmentKind[] = ['ins', 'del', 'format', 'ins', 'del'];
  const segments = (changes: number): Segment[] => {
    const out: Segment[] = [];
    for (let i = 0; i < changes; i++) {
      out.push({ kind: 'plain', text: `${phrase(3)} ` });
      out.push({ kind: kinds[Math.floor(random() * kinds.length)]!, text: `${phrase(1 + Math.floor(random() * 3))} ` });
    }
    out.push({ kind: 'plain', text: `${phrase(2)}.` });
    return out;
  };
  const body: TrackedModel['body'] = [];
  for (let p = 0; p < options.paragraphs; p++) {
    const roll = random();
    body.push({ segments: segments(options.changesPerParagraph), mark: roll < 0.08 ? 'ins' : roll < 0.16 ? 'del' : 'plain' });
    if (p === Math.floor(options.paragraphs / 3)) {
      // A move: the same words leave here and arrive in the next paragraph.
      const moved = `${phrase(3)} `;
      (body.at(-1) as Paragraph).segments.unshift({ kind: 'moveFrom', text: moved });
      body.push({ segments: [{ kind: 'plain', text: `${phrase(2)} ` }, { kind: 'moveTo', text: moved }, { kind: 'plain', text: `${phrase(2)}.` }], mark: 'plain' });
    }
    if (p === Math.floor(options.paragraphs / 2)) {
      // Word keeps the paragraph mark before a table (there is nothing to join).
      (body.at(-1) as Paragraph).mark = 'plain';
      body.push({ rows: [
        { cells: [phrase(2), phrase(2)], kind: 'plain' },
        { cells: [phrase(2), phrase(2)], kind: 'ins' },
        { cells: [phrase(2), phrase(2)], kind: 'del' },
        { cells: [phrase(2), phrase(2)], kind: 'plain' },
      ] });
    }
  }
  body.push({ segments: [{ kind: 'plain', text: phrase(3) }], mark: 'plain' }); // the last mark is never tracked
  return { rtl: options.rtl, body, header: segments(2), footnote: segments(2) };
}

let revision = 0;
const attrs = () => `w:id="${++revision}" w:author="Reviewer" w:date="2026-01-01T00:00:00Z"`;

function runXml(text: string, rtl: boolean, deleted = false, extraRPr = ''): string {
  const rPr = `${extraRPr}${rtl ? '<w:rtl/>' : ''}`;
  const t = deleted ? 'w:delText' : 'w:t';
  return `<w:r>${rPr ? `<w:rPr>${rPr}</w:rPr>` : ''}<${t} xml:space="preserve">${esc(text)}</${t}></w:r>`;
}

type Outcome = 'tracked' | 'accepted' | 'rejected';
const keeps = (kind: SegmentKind, outcome: Outcome) =>
  outcome === 'tracked' || kind === 'plain' || kind === 'format' || (outcome === 'accepted' ? kind === 'ins' || kind === 'moveTo' : kind === 'del' || kind === 'moveFrom');

function segmentsXml(segments: Segment[], rtl: boolean, outcome: Outcome): string {
  return segments
    .filter((s) => keeps(s.kind, outcome))
    .map((s) => {
      if (outcome !== 'tracked') return runXml(s.text, rtl, false, s.kind === 'format' && outcome === 'accepted' ? '<w:b/>' : '');
      switch (s.kind) {
        case 'plain':
          return runXml(s.text, rtl);
        case 'format':
          return runXml(s.text, rtl, false, `<w:b/><w:rPrChange ${attrs()}><w:rPr/></w:rPrChange>`);
        case 'ins':
        case 'moveTo':
          return `<w:${s.kind} ${attrs()}>${runXml(s.text, rtl)}</w:${s.kind}>`;
        case 'del':
        case 'moveFrom':
          return `<w:${s.kind} ${attrs()}>${runXml(s.text, rtl, true)}</w:${s.kind}>`;
      }
    })
    .join('');
}

function paragraphXml(segments: Segment[], rtl: boolean, outcome: Outcome, mark: Paragraph['mark'] = 'plain'): string {
  const markXml = outcome === 'tracked' && mark !== 'plain' ? `<w:rPr><w:${mark} ${attrs()}/></w:rPr>` : '';
  const pPr = `${rtl ? '<w:bidi/>' : ''}${markXml}`;
  return `<w:p>${pPr ? `<w:pPr>${pPr}</w:pPr>` : ''}${segmentsXml(segments, rtl, outcome)}</w:p>`;
}

function bodyXml(model: TrackedModel, outcome: Outcome): string {
  const out: string[] = [];
  /** Segments of paragraphs whose mark is gone, waiting for the paragraph they join. */
  let carried: Segment[] = [];
  for (const block of model.body) {
    if ('rows' in block) {
      const rows = block.rows.filter((r) => outcome === 'tracked' || r.kind === 'plain' || (outcome === 'accepted') === (r.kind === 'ins'));
      const rowXml = rows.map((r) => {
        const trPr = outcome === 'tracked' && r.kind !== 'plain' ? `<w:trPr><w:${r.kind} ${attrs()}/></w:trPr>` : '';
        const cells = r.cells.map((c) => `<w:tc><w:tcPr><w:tcW w:w="4000" w:type="dxa"/></w:tcPr>${paragraphXml([{ kind: r.kind === 'del' && outcome === 'tracked' ? 'del' : r.kind === 'ins' && outcome === 'tracked' ? 'ins' : 'plain', text: c }], model.rtl, outcome)}</w:tc>`).join('');
        return `<w:tr>${trPr}${cells}</w:tr>`;
      });
      out.push(`<w:tbl><w:tblPr><w:tblW w:w="8000" w:type="dxa"/>${model.rtl ? '<w:bidiVisual/>' : ''}</w:tblPr><w:tblGrid><w:gridCol w:w="4000"/><w:gridCol w:w="4000"/></w:tblGrid>${rowXml.join('')}</w:tbl>`);
      continue;
    }
    if (outcome === 'tracked') {
      out.push(paragraphXml(block.segments, model.rtl, outcome, block.mark));
      continue;
    }
    const goes = outcome === 'accepted' ? block.mark === 'del' : block.mark === 'ins';
    carried = [...carried, ...block.segments];
    if (goes) continue;
    out.push(paragraphXml(carried, model.rtl, outcome));
    carried = [];
  }
  return out.join('');
}

/** The DOCX for one outcome: the tracked original, or the document as accepted / rejected in advance. */
export function trackedDocx(model: TrackedModel, outcome: Outcome): Buffer {
  const zip = new PizZip();
  const ct = 'application/vnd.openxmlformats-officedocument.wordprocessingml';
  zip.file('[Content_Types].xml', `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="${ct}.document.main+xml"/><Override PartName="/word/header1.xml" ContentType="${ct}.header+xml"/><Override PartName="/word/footnotes.xml" ContentType="${ct}.footnotes+xml"/><Override PartName="/word/settings.xml" ContentType="${ct}.settings+xml"/></Types>`);
  zip.file('_rels/.rels', `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${R}/officeDocument" Target="word/document.xml"/></Relationships>`);
  zip.file('word/_rels/document.xml.rels', `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${R}/header" Target="header1.xml"/><Relationship Id="rId2" Type="${R}/footnotes" Target="footnotes.xml"/><Relationship Id="rId3" Type="${R}/settings" Target="settings.xml"/></Relationships>`);
  zip.file('word/settings.xml', `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:settings xmlns:w="${W}">${outcome === 'tracked' ? '<w:trackRevisions/>' : ''}</w:settings>`);
  zip.file('word/header1.xml', `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:hdr xmlns:w="${W}">${paragraphXml(model.header, model.rtl, outcome)}</w:hdr>`);
  zip.file('word/footnotes.xml', `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:footnotes xmlns:w="${W}"><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote><w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p></w:footnote><w:footnote w:id="1">${paragraphXml(model.footnote, model.rtl, outcome)}</w:footnote></w:footnotes>`);
  const noteRef = `<w:p><w:r><w:t xml:space="preserve">note </w:t></w:r><w:r><w:rPr><w:vertAlign w:val="superscript"/></w:rPr><w:footnoteReference w:id="1"/></w:r></w:p>`;
  zip.file('word/document.xml', `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="${W}" xmlns:r="${R}"><w:body>${noteRef}${bodyXml(model, outcome)}<w:sectPr><w:headerReference w:type="default" r:id="rId1"/><w:pgSz w:w="12240" w:h="15840"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="720" w:footer="720" w:gutter="0"/>${model.rtl ? '<w:bidi/>' : ''}</w:sectPr></w:body></w:document>`);
  return zip.generate({ type: 'nodebuffer', compression: 'DEFLATE' });
}

/** Number of tracked changes the model's tracked document holds. */
export function changeCount(model: TrackedModel): number {
  const inSegments = (segments: Segment[]) => segments.filter((s) => s.kind !== 'plain').length;
  let n = inSegments(model.header) + inSegments(model.footnote);
  for (const block of model.body) {
    if ('rows' in block) n += block.rows.filter((r) => r.kind !== 'plain').length * 3;
    else n += inSegments(block.segments) + (block.mark === 'plain' ? 0 : 1);
  }
  return n;
}
