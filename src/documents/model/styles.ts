import { NS, XML_DECLARATION } from '../ooxml/constants.js';

/**
 * Our styles.xml. Every style id the writer uses is defined here with Word's built-in names
 * (so the navigation pane, TOC and users' restyling work). With a reference document its
 * styles.xml is used instead, and only the ids it lacks are added from this table.
 */
export const BODY_FONT = 'Calibri';
export const HEADING_FONT = 'Calibri Light';
export const MONO_FONT = 'Consolas';

const fonts = (name: string) => `<w:rFonts w:ascii="${name}" w:hAnsi="${name}" w:eastAsia="${name}" w:cs="${name}"/>`;

function heading(level: number, halfPoints: number, color: string): string {
  return (
    `<w:style w:type="paragraph" w:styleId="Heading${level}"><w:name w:val="heading ${level}"/><w:basedOn w:val="Normal"/>` +
    `<w:next w:val="Normal"/><w:uiPriority w:val="9"/><w:qFormat/><w:pPr><w:keepNext/><w:keepLines/>` +
    `<w:spacing w:before="${level <= 2 ? 360 : 240}" w:after="80"/><w:outlineLvl w:val="${level - 1}"/></w:pPr>` +
    `<w:rPr>${fonts(HEADING_FONT)}<w:b/><w:bCs/>${level >= 5 ? '<w:i/><w:iCs/>' : ''}<w:color w:val="${color}"/>` +
    `<w:sz w:val="${halfPoints}"/><w:szCs w:val="${halfPoints}"/></w:rPr></w:style>`
  );
}

const THIN = 'w:val="single" w:sz="4" w:space="0" w:color="A6A6A6"';

/** Style id → definition. Order is the order written into styles.xml. */
export const STYLE_DEFINITIONS: ReadonlyMap<string, string> = new Map([
  ['Normal', `<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/><w:qFormat/></w:style>`],
  ['DefaultParagraphFont', `<w:style w:type="character" w:default="1" w:styleId="DefaultParagraphFont"><w:name w:val="Default Paragraph Font"/><w:uiPriority w:val="1"/><w:semiHidden/><w:unhideWhenUsed/></w:style>`],
  ['TableNormal', `<w:style w:type="table" w:default="1" w:styleId="TableNormal"><w:name w:val="Normal Table"/><w:uiPriority w:val="99"/><w:semiHidden/><w:unhideWhenUsed/><w:tblPr><w:tblInd w:w="0" w:type="dxa"/><w:tblCellMar><w:top w:w="0" w:type="dxa"/><w:left w:w="108" w:type="dxa"/><w:bottom w:w="0" w:type="dxa"/><w:right w:w="108" w:type="dxa"/></w:tblCellMar></w:tblPr></w:style>`],
  ['NoList', `<w:style w:type="numbering" w:default="1" w:styleId="NoList"><w:name w:val="No List"/><w:uiPriority w:val="99"/><w:semiHidden/><w:unhideWhenUsed/></w:style>`],
  ['Heading1', heading(1, 32, '2F5496')],
  ['Heading2', heading(2, 28, '2F5496')],
  ['Heading3', heading(3, 26, '1F3763')],
  ['Heading4', heading(4, 24, '2F5496')],
  ['Heading5', heading(5, 22, '2F5496')],
  ['Heading6', heading(6, 22, '1F3763')],
  ['Title', `<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:uiPriority w:val="10"/><w:qFormat/><w:pPr><w:spacing w:after="240"/><w:contextualSpacing/><w:jc w:val="center"/></w:pPr><w:rPr>${fonts(HEADING_FONT)}<w:kern w:val="28"/><w:sz w:val="56"/><w:szCs w:val="56"/></w:rPr></w:style>`],
  ['Subtitle', `<w:style w:type="paragraph" w:styleId="Subtitle"><w:name w:val="Subtitle"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:uiPriority w:val="11"/><w:qFormat/><w:pPr><w:jc w:val="center"/></w:pPr><w:rPr><w:color w:val="5A5A5A"/><w:sz w:val="28"/></w:rPr></w:style>`],
  ['Author', `<w:style w:type="paragraph" w:customStyle="1" w:styleId="Author"><w:name w:val="Author"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:qFormat/><w:pPr><w:jc w:val="center"/></w:pPr></w:style>`],
  ['Date', `<w:style w:type="paragraph" w:styleId="Date"><w:name w:val="Date"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:qFormat/><w:pPr><w:jc w:val="center"/></w:pPr></w:style>`],
  ['Quote', `<w:style w:type="paragraph" w:styleId="Quote"><w:name w:val="Quote"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:uiPriority w:val="29"/><w:qFormat/><w:pPr><w:pBdr><w:left w:val="single" w:sz="18" w:space="8" w:color="C8C8C8"/></w:pBdr><w:spacing w:before="80" w:after="80"/><w:ind w:left="720" w:right="720"/></w:pPr><w:rPr><w:color w:val="404040"/></w:rPr></w:style>`],
  ['BlockText', `<w:style w:type="paragraph" w:styleId="BlockText"><w:name w:val="Block Text"/><w:basedOn w:val="Quote"/><w:next w:val="Normal"/><w:qFormat/></w:style>`],
  ['SourceCode', `<w:style w:type="paragraph" w:customStyle="1" w:styleId="SourceCode"><w:name w:val="Source Code"/><w:basedOn w:val="Normal"/><w:link w:val="VerbatimChar"/><w:qFormat/><w:pPr><w:wordWrap w:val="off"/><w:shd w:val="clear" w:color="auto" w:fill="F6F8FA"/><w:spacing w:before="80" w:after="160" w:line="240" w:lineRule="auto"/></w:pPr><w:rPr>${fonts(MONO_FONT)}<w:sz w:val="20"/><w:szCs w:val="20"/></w:rPr></w:style>`],
  ['VerbatimChar', `<w:style w:type="character" w:customStyle="1" w:styleId="VerbatimChar"><w:name w:val="Verbatim Char"/><w:link w:val="SourceCode"/><w:qFormat/><w:rPr>${fonts(MONO_FONT)}<w:sz w:val="20"/><w:szCs w:val="20"/></w:rPr></w:style>`],
  ['Hyperlink', `<w:style w:type="character" w:styleId="Hyperlink"><w:name w:val="Hyperlink"/><w:uiPriority w:val="99"/><w:unhideWhenUsed/><w:rPr><w:color w:val="0563C1"/><w:u w:val="single"/></w:rPr></w:style>`],
  ['FootnoteText', `<w:style w:type="paragraph" w:styleId="FootnoteText"><w:name w:val="footnote text"/><w:basedOn w:val="Normal"/><w:uiPriority w:val="99"/><w:unhideWhenUsed/><w:qFormat/><w:pPr><w:spacing w:after="0" w:line="240" w:lineRule="auto"/></w:pPr><w:rPr><w:sz w:val="20"/><w:szCs w:val="20"/></w:rPr></w:style>`],
  ['FootnoteReference', `<w:style w:type="character" w:styleId="FootnoteReference"><w:name w:val="footnote reference"/><w:uiPriority w:val="99"/><w:unhideWhenUsed/><w:rPr><w:vertAlign w:val="superscript"/></w:rPr></w:style>`],
  ['ListParagraph', `<w:style w:type="paragraph" w:styleId="ListParagraph"><w:name w:val="List Paragraph"/><w:basedOn w:val="Normal"/><w:uiPriority w:val="34"/><w:qFormat/><w:pPr><w:ind w:left="720"/><w:contextualSpacing/></w:pPr></w:style>`],
  ['Compact', `<w:style w:type="paragraph" w:customStyle="1" w:styleId="Compact"><w:name w:val="Compact"/><w:basedOn w:val="Normal"/><w:qFormat/><w:pPr><w:spacing w:before="36" w:after="36"/></w:pPr></w:style>`],
  ['Caption', `<w:style w:type="paragraph" w:styleId="Caption"><w:name w:val="caption"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:uiPriority w:val="35"/><w:unhideWhenUsed/><w:qFormat/><w:pPr><w:spacing w:after="200"/></w:pPr><w:rPr><w:i/><w:iCs/><w:color w:val="44546A"/><w:sz w:val="18"/><w:szCs w:val="18"/></w:rPr></w:style>`],
  ['DefinitionTerm', `<w:style w:type="paragraph" w:customStyle="1" w:styleId="DefinitionTerm"><w:name w:val="Definition Term"/><w:basedOn w:val="Normal"/><w:next w:val="Definition"/><w:qFormat/><w:pPr><w:keepNext/><w:spacing w:after="0"/></w:pPr><w:rPr><w:b/></w:rPr></w:style>`],
  ['Definition', `<w:style w:type="paragraph" w:customStyle="1" w:styleId="Definition"><w:name w:val="Definition"/><w:basedOn w:val="Normal"/><w:qFormat/><w:pPr><w:ind w:left="720"/></w:pPr></w:style>`],
  ['TableGrid', `<w:style w:type="table" w:styleId="TableGrid"><w:name w:val="Table Grid"/><w:basedOn w:val="TableNormal"/><w:uiPriority w:val="39"/><w:pPr><w:spacing w:before="40" w:after="40" w:line="240" w:lineRule="auto"/></w:pPr><w:tblPr><w:tblBorders><w:top ${THIN}/><w:left ${THIN}/><w:bottom ${THIN}/><w:right ${THIN}/><w:insideH ${THIN}/><w:insideV ${THIN}/></w:tblBorders></w:tblPr><w:tblStylePr w:type="firstRow"><w:rPr><w:b/><w:bCs/></w:rPr><w:tcPr><w:shd w:val="clear" w:color="auto" w:fill="F2F2F2"/></w:tcPr></w:tblStylePr></w:style>`],
  ['LayoutTable', `<w:style w:type="table" w:customStyle="1" w:styleId="LayoutTable"><w:name w:val="Layout Table"/><w:basedOn w:val="TableNormal"/><w:uiPriority w:val="99"/></w:style>`],
]);

const DOC_DEFAULTS =
  `<w:docDefaults><w:rPrDefault><w:rPr>${fonts(BODY_FONT)}<w:sz w:val="22"/><w:szCs w:val="22"/><w:lang w:val="en-US" w:eastAsia="en-US" w:bidi="ar-SA"/></w:rPr></w:rPrDefault>` +
  `<w:pPrDefault><w:pPr><w:spacing w:after="160" w:line="259" w:lineRule="auto"/></w:pPr></w:pPrDefault></w:docDefaults>`;

const STYLES_OPEN =
  `<w:styles xmlns:w="${NS.wordprocessingml}" xmlns:r="${NS.officeRelationships}">`;

export function buildStylesXml(): string {
  return `${XML_DECLARATION}${STYLES_OPEN}${DOC_DEFAULTS}${[...STYLE_DEFINITIONS.values()].join('')}</w:styles>`;
}

/**
 * Keeps a reference document's styles and appends our definitions for the ids it lacks.
 * Defaults (w:default="1") are not re-added when the reference already has one of that type.
 */
export function mergeReferenceStyles(referenceXml: string): string {
  const present = new Set([...referenceXml.matchAll(/w:styleId="([^"]*)"/g)].map((m) => m[1]));
  const defaultTypes = new Set(
    [...referenceXml.matchAll(/<w:style\b[^<>]*>/g)]
      .map((m) => m[0])
      .filter((tag) => /w:default="(1|true|on)"/.test(tag))
      .map((tag) => /w:type="([^"]*)"/.exec(tag)?.[1]),
  );
  const missing = [...STYLE_DEFINITIONS.entries()]
    .filter(([id, xml]) => !present.has(id))
    .map(([, xml]) => {
      const type = /w:type="([^"]*)"/.exec(xml)?.[1];
      return defaultTypes.has(type) ? xml.replace(' w:default="1"', '') : xml;
    });
  const close = referenceXml.lastIndexOf('</w:styles>');
  if (close < 0) return buildStylesXml();
  // The reference may bind the WordprocessingML namespace to another prefix; ours need w:.
  let merged = referenceXml.slice(0, close) + missing.join('') + referenceXml.slice(close);
  if (!/xmlns:w="http:\/\/schemas\.openxmlformats\.org\/wordprocessingml\/2006\/main"/.test(merged)) return buildStylesXml();
  if (!/<w:styles\b/.test(merged)) return buildStylesXml();
  merged = merged.replace(/^\uFEFF/, '');
  return merged;
}
