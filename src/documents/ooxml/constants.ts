/** Namespaces, relationship types and content types of OPC packages (ECMA-376 Part 2) and WordprocessingML: the one table. */

export const NS = {
  contentTypes: 'http://schemas.openxmlformats.org/package/2006/content-types',
  relationships: 'http://schemas.openxmlformats.org/package/2006/relationships',
  /** OPC digital signatures (mdssi:). */
  mdssi: 'http://schemas.openxmlformats.org/package/2006/digital-signature',
  coreProperties: 'http://schemas.openxmlformats.org/package/2006/metadata/core-properties',
  extendedProperties: 'http://schemas.openxmlformats.org/officeDocument/2006/extended-properties',
  docPropsVTypes: 'http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes',
  wordprocessingml: 'http://schemas.openxmlformats.org/wordprocessingml/2006/main',
  /** ISO/IEC 29500 Strict WordprocessingML. */
  wordprocessingmlStrict: 'http://purl.oclc.org/ooxml/wordprocessingml/main',
  /** Word 2010 extensions (w14:). */
  word2010: 'http://schemas.microsoft.com/office/word/2010/wordml',
  /** wp: */
  wordprocessingDrawing: 'http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing',
  /** a: */
  drawingml: 'http://schemas.openxmlformats.org/drawingml/2006/main',
  /** pic: (also the graphicData URI of pictures) */
  picture: 'http://schemas.openxmlformats.org/drawingml/2006/picture',
  /** wps: (also the graphicData URI of shapes) */
  wordprocessingShape: 'http://schemas.microsoft.com/office/word/2010/wordprocessingShape',
  /** asvg: the SVG picture extension of Office 2016 */
  svgBlip: 'http://schemas.microsoft.com/office/drawing/2016/SVG/main',
  markupCompatibility: 'http://schemas.openxmlformats.org/markup-compatibility/2006',
  /** r: attributes that point at relationships of the part (r:id, r:embed). */
  officeRelationships: 'http://schemas.openxmlformats.org/officeDocument/2006/relationships',
  dublinCore: 'http://purl.org/dc/elements/1.1/',
  dcterms: 'http://purl.org/dc/terms/',
  dcmitype: 'http://purl.org/dc/dcmitype/',
  xsi: 'http://www.w3.org/2001/XMLSchema-instance',
  dsig: 'http://www.w3.org/2000/09/xmldsig#',
  xades132: 'http://uri.etsi.org/01903/v1.3.2#',
  xades141: 'http://uri.etsi.org/01903/v1.4.1#',
  officeDigsig: 'http://schemas.microsoft.com/office/2006/digsig',
  xmlns: 'http://www.w3.org/2000/xmlns/',
  xml: 'http://www.w3.org/XML/1998/namespace',
} as const;

const PACKAGE_RELATIONSHIPS = 'http://schemas.openxmlformats.org/package/2006/relationships';

export const REL = {
  signatureOrigin: `${PACKAGE_RELATIONSHIPS}/digital-signature/origin`,
  signature: `${PACKAGE_RELATIONSHIPS}/digital-signature/signature`,
  coreProperties: `${PACKAGE_RELATIONSHIPS}/metadata/core-properties`,
  thumbnail: `${PACKAGE_RELATIONSHIPS}/metadata/thumbnail`,
  extendedProperties: `${NS.officeRelationships}/extended-properties`,
  officeDocument: `${NS.officeRelationships}/officeDocument`,
  image: `${NS.officeRelationships}/image`,
  hyperlink: `${NS.officeRelationships}/hyperlink`,
  /** docproc's signed audit record of a DOCX signature (docproc/audit-trail*.json); no office application follows it. */
  docprocAuditTrail: 'urn:docproc:relationships:audit-trail',
} as const;

/**
 * Relationships Word and LibreOffice leave out of a package signature, with their targets:
 * document properties they rewrite freely, and the signature origin (the signatures themselves).
 */
export const UNSIGNED_BY_SIGNERS: ReadonlySet<string> = new Set([REL.signatureOrigin, REL.coreProperties, REL.extendedProperties]);

/**
 * What a valid signature may leave unsigned: the above, the package thumbnail (file managers show
 * it, office applications do not) and the audit record a later docproc signer adds. None of them
 * changes what an office application shows as the document; everything else reachable from the
 * package root must be signed (verify/docx/scope.ts).
 */
export const UNSIGNED_ALLOWED: ReadonlySet<string> = new Set([...UNSIGNED_BY_SIGNERS, REL.thumbnail, REL.docprocAuditTrail]);

export const CONTENT_TYPE = {
  relationships: 'application/vnd.openxmlformats-package.relationships+xml',
  signatureOrigin: 'application/vnd.openxmlformats-package.digital-signature-origin',
  xmlSignature: 'application/vnd.openxmlformats-package.digital-signature-xmlsignature+xml',
} as const;

/** The package-level stream that declares content types; not itself a part. */
export const CONTENT_TYPES_PART = '/[Content_Types].xml';

/** The package relationships part and the source name relationships() uses for the package itself. */
export const PACKAGE_SOURCE = '/';

/** ECMA-376 Part 2 §13.2.4.24: the transform that signs a subset of a .rels part. */
export const RELATIONSHIP_TRANSFORM = 'http://schemas.openxmlformats.org/package/2006/RelationshipTransform';

export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
