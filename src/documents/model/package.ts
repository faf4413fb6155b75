import { DomainError, invalidFile } from '../../errors/domain-error.js';
import { OpcPackage } from '../ooxml/package.js';
import { BodyWriter, type MediaFile, type Relationship } from './body-writer.js';
import { buildStylesXml, mergeReferenceStyles } from './styles.js';
import type { DocumentMetadata, DocumentModel } from './types.js';
import { CONTENT_TYPE, NS, REL, XML_DECLARATION } from '../ooxml/constants.js';
import { escapeXml as esc } from '../ooxml/xml-text.js';
import { compressPart, writeZip, type CompressedPart, type ZipPart } from '../ooxml/zip/write.js';

/** Assembles a complete DOCX package from the document model. */
const PART_NAMESPACES =
  `xmlns:w="${NS.wordprocessingml}" xmlns:r="${NS.officeRelationships}" xmlns:wp="${NS.wordprocessingDrawing}" xmlns:a="${NS.drawingml}" ` +
  `xmlns:pic="${NS.picture}" xmlns:mc="${NS.markupCompatibility}" xmlns:w14="${NS.word2010}" mc:Ignorable="w14"`;

const SECTION =
  '<w:sectPr><w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" ' +
  'w:header="708" w:footer="708" w:gutter="0"/><w:cols w:space="708"/><w:docGrid w:linePitch="360"/></w:sectPr>';

const CT = {
  document: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml',
  styles: 'application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml',
  numbering: 'application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml',
  footnotes: 'application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml',
  settings: 'application/vnd.openxmlformats-officedocument.wordprocessingml.settings+xml',
  fontTable: 'application/vnd.openxmlformats-officedocument.wordprocessingml.fontTable+xml',
  webSettings: 'application/vnd.openxmlformats-officedocument.wordprocessingml.webSettings+xml',
  theme: 'application/vnd.openxmlformats-officedocument.theme+xml',
  core: 'application/vnd.openxmlformats-package.core-properties+xml',
  app: 'application/vnd.openxmlformats-officedocument.extended-properties+xml',
};

/** Fixed word/ parts: [rel id, type, target, content type]. */
const FIXED_PARTS: [string, string, string, string][] = [
  ['rId1', 'styles', 'styles.xml', CT.styles],
  ['rId2', 'numbering', 'numbering.xml', CT.numbering],
  ['rId3', 'footnotes', 'footnotes.xml', CT.footnotes],
  ['rId4', 'settings', 'settings.xml', CT.settings],
  ['rId5', 'fontTable', 'fontTable.xml', CT.fontTable],
  ['rId6', 'webSettings', 'webSettings.xml', CT.webSettings],
];
const THEME_REL_ID = 'rId7';
const FIRST_FREE_REL_ID = 8;

const FONT_TABLE =
  `${XML_DECLARATION}<w:fonts xmlns:w="${NS.wordprocessingml}">` +
  [['Calibri', 'swiss', 'variable'], ['Calibri Light', 'swiss', 'variable'], ['Consolas', 'modern', 'fixed'], ['Arial', 'swiss', 'variable'], ['MS Gothic', 'modern', 'fixed']]
    .map(([name, family, pitch]) => `<w:font w:name="${name}"><w:family w:val="${family}"/><w:pitch w:val="${pitch}"/></w:font>`)
    .join('') +
  '</w:fonts>';

const SETTINGS =
  `${XML_DECLARATION}<w:settings xmlns:w="${NS.wordprocessingml}"><w:zoom w:percent="100"/><w:defaultTabStop w:val="720"/>` +
  '<w:characterSpacingControl w:val="doNotCompress"/><w:footnotePr><w:footnote w:id="-1"/><w:footnote w:id="0"/></w:footnotePr>' +
  '<w:compat><w:compatSetting w:name="compatibilityMode" w:uri="http://schemas.microsoft.com/office/word" w:val="15"/></w:compat></w:settings>';

const WEB_SETTINGS = `${XML_DECLARATION}<w:webSettings xmlns:w="${NS.wordprocessingml}"><w:optimizeForBrowser/><w:allowPNG/></w:webSettings>`;

const SEPARATOR_PARAGRAPH_PR = '<w:pPr><w:spacing w:after="0" w:line="240" w:lineRule="auto"/></w:pPr>';
const FOOTNOTE_SEPARATORS =
  `<w:footnote w:type="separator" w:id="-1"><w:p>${SEPARATOR_PARAGRAPH_PR}<w:r><w:separator/></w:r></w:p></w:footnote>` +
  `<w:footnote w:type="continuationSeparator" w:id="0"><w:p>${SEPARATOR_PARAGRAPH_PR}<w:r><w:continuationSeparator/></w:r></w:p></w:footnote>`;

interface ReferenceParts {
  styles: string;
  theme?: Buffer;
  fontTable?: string;
}

function readReference(reference: Uint8Array): ReferenceParts {
  let pkg: OpcPackage;
  try {
    pkg = OpcPackage.open(reference);
  } catch (err) {
    if (err instanceof DomainError) throw new DomainError(err.code, `The reference document is unusable: ${err.message}`);
    throw err;
  }
  const text = (partName: string) => (pkg.has(partName) ? pkg.text(partName) : undefined);
  const styles = text('/word/styles.xml');
  if (!styles) throw invalidFile('The reference document has no word/styles.xml; send a DOCX saved by Word or LibreOffice.');
  const theme = pkg.bytes('/word/theme/theme1.xml');
  return { styles: mergeReferenceStyles(styles), theme: theme && Buffer.from(theme.buffer, theme.byteOffset, theme.byteLength), fontTable: text('/word/fontTable.xml') };
}

function relationshipsXml(entries: { id: string; type: string; target: string; external?: boolean }[]): string {
  const items = entries
    .map((e) => `<Relationship Id="${e.id}" Type="${e.type}" Target="${esc(e.target)}"${e.external ? ' TargetMode="External"' : ''}/>`)
    .join('');
  return `${XML_DECLARATION}<Relationships xmlns="${NS.relationships}">${items}</Relationships>`;
}

function contentRels(rels: Relationship[]) {
  return rels.map((rel) =>
    rel.type === 'hyperlink'
      ? { id: rel.id, type: `${NS.officeRelationships}/hyperlink`, target: rel.target, external: true }
      : { id: rel.id, type: `${NS.officeRelationships}/image`, target: rel.target },
  );
}

function isoDate(value: string | undefined): string {
  const time = value ? Date.parse(value) : Number.NaN;
  return (Number.isNaN(time) ? new Date() : new Date(time)).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function corePropertiesXml(meta: DocumentMetadata): string {
  const element = (tag: string, value?: string) => (value ? `<${tag}>${esc(value)}</${tag}>` : '');
  const created = isoDate(meta.date);
  return (
    `${XML_DECLARATION}<cp:coreProperties xmlns:cp="${NS.coreProperties}" xmlns:dc="${NS.dublinCore}" xmlns:dcterms="${NS.dcterms}" ` +
    `xmlns:dcmitype="${NS.dcmitype}" xmlns:xsi="${NS.xsi}">` +
    element('dc:title', meta.title) +
    element('dc:subject', meta.subject) +
    element('dc:creator', meta.author) +
    element('cp:keywords', meta.keywords?.join(', ')) +
    element('dc:description', meta.description) +
    `<dcterms:created xsi:type="dcterms:W3CDTF">${created}</dcterms:created>` +
    `<dcterms:modified xsi:type="dcterms:W3CDTF">${created}</dcterms:modified>` +
    '</cp:coreProperties>'
  );
}

const APP_XML =
  `${XML_DECLARATION}<Properties xmlns="${NS.extendedProperties}" xmlns:vt="${NS.docPropsVTypes}"><Application>docproc</Application></Properties>`;

function contentTypesXml(media: MediaFile[], hasTheme: boolean): string {
  const formats = new Set(media.map((m) => m.format));
  const defaults =
    `<Default Extension="rels" ContentType="${CONTENT_TYPE.relationships}"/>` +
    '<Default Extension="xml" ContentType="application/xml"/>' +
    [...formats].map((f) => `<Default Extension="${f}" ContentType="image/${f}"/>`).join('');
  const overrides = [
    ['/word/document.xml', CT.document],
    ...FIXED_PARTS.map(([, , target, type]) => [`/word/${target}`, type]),
    ...(hasTheme ? [['/word/theme/theme1.xml', CT.theme]] : []),
    ['/docProps/core.xml', CT.core],
    ['/docProps/app.xml', CT.app],
  ]
    .map(([part, type]) => `<Override PartName="${part}" ContentType="${type}"/>`)
    .join('');
  return `${XML_DECLARATION}<Types xmlns="${NS.contentTypes}">${defaults}${overrides}</Types>`;
}

const PACKAGE_RELS = [
  { id: 'rId1', type: `${NS.officeRelationships}/officeDocument`, target: 'word/document.xml' },
  { id: 'rId2', type: REL.coreProperties, target: 'docProps/core.xml' },
  { id: 'rId3', type: `${NS.officeRelationships}/extended-properties`, target: 'docProps/app.xml' },
];

/** Parts that are the same in every package, compressed once per process. */
let fixedPartCache: Record<'packageRels' | 'styles' | 'settings' | 'fontTable' | 'webSettings' | 'app', CompressedPart> | undefined;

function fixedParts() {
  const part = (name: string, xml: string) => compressPart({ name, data: Buffer.from(xml, 'utf8') });
  fixedPartCache ??= {
    packageRels: part('_rels/.rels', relationshipsXml(PACKAGE_RELS)),
    styles: part('word/styles.xml', buildStylesXml()),
    settings: part('word/settings.xml', SETTINGS),
    fontTable: part('word/fontTable.xml', FONT_TABLE),
    webSettings: part('word/webSettings.xml', WEB_SETTINGS),
    app: part('docProps/app.xml', APP_XML),
  };
  return fixedPartCache;
}

export function writeDocx(model: DocumentModel, options: { reference?: Uint8Array } = {}): Buffer {
  const reference = options.reference ? readReference(options.reference) : undefined;
  const writer = new BodyWriter(FIRST_FREE_REL_ID);
  const body = writer.body(model.blocks);
  const documentXml = `${XML_DECLARATION}<w:document ${PART_NAMESPACES}><w:body>${body}${SECTION}</w:body></w:document>`;
  const footnotesXml = `${XML_DECLARATION}<w:footnotes ${PART_NAMESPACES}>${FOOTNOTE_SEPARATORS}${writer.footnotes.join('')}</w:footnotes>`;

  const documentRels = [
    ...FIXED_PARTS.map(([id, type, target]) => ({ id, type: `${NS.officeRelationships}/${type}`, target })),
    ...(reference?.theme ? [{ id: THEME_REL_ID, type: `${NS.officeRelationships}/theme`, target: 'theme/theme1.xml' }] : []),
    ...contentRels(writer.rels.document),
  ];
  const text = (name: string, xml: string): ZipPart => ({ name, data: Buffer.from(xml, 'utf8') });
  const fixed = fixedParts();
  const parts: (ZipPart | CompressedPart)[] = [
    text('[Content_Types].xml', contentTypesXml(writer.media, Boolean(reference?.theme))),
    fixed.packageRels,
    text('word/document.xml', documentXml),
    text('word/_rels/document.xml.rels', relationshipsXml(documentRels)),
    reference ? text('word/styles.xml', reference.styles) : fixed.styles,
    text('word/numbering.xml', writer.numbering.toXml()),
    text('word/footnotes.xml', footnotesXml),
    fixed.settings,
    reference?.fontTable ? text('word/fontTable.xml', reference.fontTable) : fixed.fontTable,
    fixed.webSettings,
    text('docProps/core.xml', corePropertiesXml(model.metadata)),
    fixed.app,
  ];
  if (writer.rels.footnotes.length > 0) {
    parts.push(text('word/_rels/footnotes.xml.rels', relationshipsXml(contentRels(writer.rels.footnotes))));
  }
  if (reference?.theme) parts.push({ name: 'word/theme/theme1.xml', data: reference.theme });
  for (const file of writer.media) parts.push({ name: `word/${file.path}`, data: Buffer.from(file.data), store: true });
  return writeZip(parts);
}
