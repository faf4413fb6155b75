import { PdfDict, PdfStream, asArray, isName, type PdfValue } from '../../pdf/objects.js';

/**
 * What an object is, decided by how the document uses it — the path that reaches it from the
 * trailer — never by what its own dictionary claims (/Type). One object can hold several roles
 * (a widget is a form field and an annotation; a prepared file can make one dictionary the
 * document information and a page-tree node): a change is judged in every one of them.
 */
export type RoleKind =
  | 'catalog'
  | 'info'
  | 'metadata'
  /** Catalog /Extensions, /MarkInfo, /Version, trailer /AdditionalStreams: read by no display reader. */
  | 'archival'
  | 'pageTree'
  | 'page'
  | 'annotList'
  | 'annotation'
  /** /AP dictionaries, appearance-state dictionaries, appearance streams and widget /MK, of `owner`. */
  | 'appearance'
  /** What an appearance stream draws with (resources, fonts, images, nested forms). */
  | 'appearanceContent'
  /** Objects a markup annotation carries (rich text, file specifications, sounds) of `owner`. */
  | 'annotationData'
  | 'acroForm'
  | 'fieldList'
  | 'field'
  /** An object used as the value (/V, /DV) of form field `owner`: a signature dictionary for a signature field. */
  | 'fieldValue'
  | 'formResources'
  | 'dss'
  | 'dssList'
  | 'vri'
  | 'vriEntry'
  | 'validationData'
  /** The catalog's name dictionary (/Names): name trees of destinations, embedded files, scripts, appearances. */
  | 'names'
  /** The logical structure (tags): /StructTreeRoot, structure elements, the parent tree. */
  | 'structure'
  /**
   * A reference that names an object without showing it: a destination or structure element
   * pointing at a page, an object reference (/OBJR /Obj) naming an annotation, any reference to the
   * catalog or a page-tree object from outside the page tree. What such a target may change is
   * decided by its own structural role.
   */
  | 'link'
  /** Everything else: page content and resources, the structure tree, outlines, actions, ... */
  | 'content';

export interface Role {
  kind: RoleKind;
  /** The annotation or field an appearance, annotation datum or field value belongs to. */
  owner?: number;
}

export const roleKey = (role: Role): string => (role.owner === undefined ? role.kind : `${role.kind}:${role.owner}`);

const role = (kind: RoleKind, owner?: number): Role => (owner === undefined ? { kind } : { kind, owner });
const CONTENT = role('content');

/** Keys of a form field dictionary (ISO 32000-1 Tables 220, 222, 226, 228, 232, 234): the field role reads them. */
export const FIELD_KEYS = new Set(['FT', 'Parent', 'Kids', 'T', 'TU', 'TM', 'Ff', 'V', 'DV', 'DA', 'Q', 'DS', 'RV', 'Opt', 'TI', 'I', 'MaxLen', 'Lock', 'SV']);

export const isWidget = (value: PdfValue | undefined): boolean => {
  const dict = value instanceof PdfStream ? undefined : value instanceof PdfDict ? value : undefined;
  return isName(dict?.get('Subtype'), 'Widget');
};

/**
 * A /Pages node or a page, as display readers tell them apart when walking the tree (the same test
 * as structure.ts walkPageTree): a node is /Type /Pages, or has /Kids without being /Type /Page.
 */
export const isPageTreeNode = (dict: PdfDict | undefined): boolean =>
  !!dict && (isName(dict.get('Type'), 'Pages') || (Array.isArray(dict.get('Kids')) && !isName(dict.get('Type'), 'Page')));

/** The role of what a trailer entry references. */
export function trailerRole(key: string): Role {
  if (key === 'Root') return role('catalog');
  if (key === 'Info') return role('info');
  if (key === 'AdditionalStreams') return role('archival');
  return CONTENT;
}

/**
 * The roles of the value found under `key` (a dictionary key or an array index) of a value that
 * holds `parent`. `container` is that value (a dictionary, stream or array). Returns undefined
 * when another role of the same object reads the key (field keys of a widget, for instance).
 */
export function childRole(parent: Role, key: string | number, container: PdfValue): Role | undefined {
  const k = typeof key === 'string' ? key : undefined;
  switch (parent.kind) {
    case 'catalog':
      if (k === 'Pages') return role('pageTree');
      if (k === 'AcroForm') return role('acroForm');
      if (k === 'DSS') return role('dss');
      if (k === 'Metadata') return role('metadata');
      if (k === 'Extensions' || k === 'MarkInfo' || k === 'Version') return role('archival');
      if (k === 'StructTreeRoot') return role('structure');
      if (k === 'Names') return role('names');
      return CONTENT;
    case 'info':
    case 'metadata':
    case 'archival':
    case 'validationData':
      return parent;
    case 'pageTree':
      if (k === 'Kids') return role('pageTree');
      if (typeof key === 'number') return role('pageTree'); // an element of /Kids: refined to page or node when read
      if (k === 'Parent') return role('pageTree');
      return CONTENT;
    case 'page':
      if (k === 'Annots') return role('annotList');
      if (k === 'Parent') return role('pageTree');
      return CONTENT;
    case 'annotList':
      return typeof key === 'number' ? role('annotation') : CONTENT;
    case 'annotation': {
      const widget = isWidget(container);
      if (widget && k !== undefined && FIELD_KEYS.has(k)) return undefined; // the field role reads these
      if (k === 'AP') return role('appearance', parent.owner);
      if (widget && k === 'MK') return role('appearance', parent.owner);
      if (k === 'P') return role('pageTree'); // refined to page or node when read
      if (k === 'Popup' || k === 'IRT' || k === 'Parent') return role('annotation');
      if (k === 'A' || k === 'AA' || k === 'OC' || widget) return CONTENT;
      return role('annotationData', parent.owner);
    }
    case 'appearance':
      // Inside an appearance stream's dictionary: what it draws with.
      if (container instanceof PdfStream) return role('appearanceContent');
      return parent;
    case 'appearanceContent':
      return parent;
    case 'annotationData':
      return parent;
    case 'acroForm':
      if (k === 'Fields') return role('fieldList');
      if (k === 'DR') return role('formResources');
      if (k === 'CO') return role('link'); // calculation order: names fields, shows nothing
      return CONTENT;
    case 'fieldList':
      return typeof key === 'number' ? role('field') : CONTENT;
    case 'field':
      if (k === 'Kids') return role('fieldList');
      if (k === 'Parent') return role('field');
      if (k === 'V' || k === 'DV') return role('fieldValue', parent.owner);
      if (k === 'AP') return role('appearance', parent.owner);
      if (k !== undefined && !FIELD_KEYS.has(k) && isWidget(container)) return undefined; // the annotation role reads these
      return CONTENT;
    case 'fieldValue':
    case 'formResources':
      return parent;
    case 'dss':
      if (k === 'Certs' || k === 'CRLs' || k === 'OCSPs') return role('dssList');
      if (k === 'VRI') return role('vri');
      return CONTENT;
    case 'dssList':
      return typeof key === 'number' ? role('validationData') : CONTENT;
    case 'vri':
      return k !== undefined ? role('vriEntry') : CONTENT;
    case 'vriEntry':
      if (k === 'Cert' || k === 'CRL' || k === 'OCSP') return role('dssList');
      if (k === 'TS') return role('validationData');
      return CONTENT;
    case 'content':
      return k === 'Obj' ? role('link') : CONTENT;
    case 'link':
      return role('link');
    case 'names':
      return CONTENT;
    case 'structure':
      // A structure element names its page (/Pg) and the annotations it tags (/OBJR /Obj); it shows neither.
      return k === 'Pg' || k === 'Obj' ? role('link') : parent;
  }
}

/**
 * The roles an object takes once read, given the role its reference gave it: a page-tree kid is a
 * page or a node depending on the dictionary (as readers decide), a widget annotation is also the
 * form field it belongs to, a field that is a widget is also an annotation only through a page.
 */
export function refineRoles(given: Role, value: PdfValue | undefined, num?: number): Role[] {
  if (given.kind === 'pageTree' && value instanceof PdfDict) return [role(isPageTreeNode(value) ? 'pageTree' : 'page')];
  if (given.kind === 'annotation') {
    const owned = role('annotation', num);
    return isWidget(value) ? [owned, role('field', num)] : [owned];
  }
  if (given.kind === 'field') return [role('field', num)];
  return [given];
}

/** A human description of a role for reports. */
export function describeRole(r: Role): string {
  const of = r.owner === undefined ? '' : ` of object ${r.owner}`;
  switch (r.kind) {
    case 'catalog': return 'the document catalog';
    case 'info': return 'the document information dictionary';
    case 'metadata': return 'the document metadata stream';
    case 'archival': return 'archival data (catalog /Extensions, /MarkInfo, /Version or trailer streams)';
    case 'pageTree': return 'a page-tree node';
    case 'page': return 'a page';
    case 'annotList': return "a page's annotation list";
    case 'annotation': return `an annotation${of}`;
    case 'appearance': return `the appearance${of}`;
    case 'appearanceContent': return 'content an appearance stream draws';
    case 'annotationData': return `data of annotation${of}`;
    case 'acroForm': return 'the interactive form dictionary';
    case 'fieldList': return 'a list of form fields';
    case 'field': return `form field${of}`;
    case 'fieldValue': return `the value of form field${of}`;
    case 'formResources': return 'the form default resources';
    case 'dss': return 'the document security store';
    case 'dssList': return 'a list of validation data';
    case 'vri': return 'the VRI dictionary';
    case 'vriEntry': return 'a VRI entry';
    case 'validationData': return 'validation data (certificate, CRL, OCSP response, time-stamp)';
    case 'structure': return 'the logical structure (tags)';
    case 'names': return 'the document name dictionary';
    case 'link': return 'a reference that names the object without showing it';
    case 'content': return 'page content or other displayed structure';
  }
}

export const arrayItems = (value: PdfValue | undefined): PdfValue[] => asArray(value) ?? [];
