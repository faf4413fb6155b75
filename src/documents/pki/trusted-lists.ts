import { readFileSync } from 'node:fs';
import type { Document, Element } from '@xmldom/xmldom';
import { parseCert, type Cert } from './certificates.js';
import { portableAnchors, readPemBundle, type PortableAnchor } from './trust.js';
import { NS } from '../ooxml/constants.js';
import { childElements, decodeXmlBytes, descendants, firstChild, parseXml, textOf } from '../ooxml/xml.js';
import { decodeBase64 } from '../xml-dsig/algorithms.js';
import { checkReference, indexIds } from '../xml-dsig/references.js';
import { signatureValueSigner, signedInfoMethods } from '../xml-dsig/signed-info.js';

/**
 * EU trusted lists (ETSI TS 119 612): the list of trusted lists (LOTL) and national lists, read from
 * files. Each list's enveloped XML signature is checked with the project's one XML-DSig reader
 * (xml-dsig/: references, transforms, SignedInfo and SignatureValue; the one C14N in ooxml/c14n.ts): the LOTL must
 * be signed by a configured signer (TRUST_LIST_SIGNERS), a national list by a configured signer or
 * by a certificate the verified LOTL names for its territory. The certificates of qualified services
 * (CA/QC: qualified certificate issuers; TSA/QTST: qualified time-stamping) become trust anchors for
 * the periods their status was granted. A list that fails its check stops start-up, naming the file.
 */
const TSL = 'http://uri.etsi.org/02231/v2#';
const LOTL_TYPE = 'http://uri.etsi.org/TrstSvc/TrustedList/TSLType/EUlistofthelists';

/** Service types whose certificates anchor signatures and time-stamps. */
const ANCHOR_SERVICE_TYPES = new Set(['http://uri.etsi.org/TrstSvc/Svctype/CA/QC', 'http://uri.etsi.org/TrstSvc/Svctype/TSA/QTST']);

/** Statuses under which a service is trusted: "granted" (eIDAS), and its pre-2016 equivalents (TS 119 612 v1). */
const TRUSTED_STATUSES = new Set([
  'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted',
  'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/undersupervision',
  'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/supervisionincessation',
  'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/accredited',
]);

export class TrustedListError extends Error {}

export interface TrustedListFile {
  name: string;
  xml: string | Uint8Array;
}

export interface TrustedListSummary {
  name: string;
  territory: string;
  lotl: boolean;
  signer: string;
  nextUpdate: string | null;
  anchors: number;
}

const tsl = (parent: Element | undefined, name: string) => (parent ? firstChild(parent, TSL, name) : undefined);
const tslPath = (parent: Element | undefined, ...names: string[]) => names.reduce<Element | undefined>((el, name) => tsl(el, name), parent);

function certificatesIn(el: Element | undefined): Cert[] {
  if (!el) return [];
  return descendants(el, TSL, 'X509Certificate').flatMap((c) => {
    const cert = parseCert(decodeBase64(textOf(c)));
    return cert ? [cert] : [];
  });
}

const englishName = (el: Element | undefined) => {
  const names = el ? childElements(el, TSL, 'Name') : [];
  const chosen = names.find((n) => n.getAttributeNS('http://www.w3.org/XML/1998/namespace', 'lang') === 'en') ?? names[0];
  return textOf(chosen) || '(unnamed)';
};

/**
 * Checks the enveloped signature of a list: exactly one ds:Signature under the root, every reference
 * intact, one of them covering the whole list (URI "" or the root's Id, with the enveloped-signature
 * transform), and the SignatureValue made by a certificate of `allowed` (by its key in KeyInfo).
 * Returns that certificate.
 */
export function verifyListSignature(doc: Document, allowed: Cert[]): Cert {
  const root = doc.documentElement!;
  const signatures = childElements(root, NS.dsig, 'Signature');
  if (signatures.length !== 1) throw new TrustedListError(signatures.length ? 'it carries more than one signature' : 'it is not signed');
  const signature = signatures[0]!;
  const signedInfo = firstChild(signature, NS.dsig, 'SignedInfo');
  const signatureValue = firstChild(signature, NS.dsig, 'SignatureValue');
  if (!signedInfo || !signatureValue) throw new TrustedListError('its signature has no SignedInfo or SignatureValue');
  const ctx = { ids: indexIds(doc), doc, signature };
  let coversList = false;
  for (const reference of childElements(signedInfo, NS.dsig, 'Reference')) {
    const check = checkReference(reference, ctx);
    if (!check.intact) throw new TrustedListError(`its signature does not cover it as signed: ${check.error ?? check.unsupported ?? `${check.uri} does not match`}`);
    const whole = check.uri === '' || check.element === root;
    if (whole && check.transforms.includes('enveloped-signature')) coversList = true;
  }
  if (!coversList) throw new TrustedListError('its signature does not cover the whole list');
  const { c14n, scheme } = signedInfoMethods(signedInfo);
  if (!c14n || !scheme) throw new TrustedListError('its signature uses an unsupported canonicalization or signature method');
  const keyInfo = firstChild(signature, NS.dsig, 'KeyInfo');
  const candidates = keyInfo ? descendants(keyInfo, NS.dsig, 'X509Certificate').flatMap((c) => parseCert(decodeBase64(textOf(c))) ?? []) : [];
  const signer = signatureValueSigner(signedInfo, signatureValue, candidates);
  if (!signer) throw new TrustedListError('its SignatureValue does not verify with the certificate in its KeyInfo');
  if (!allowed.some((cert) => cert.x509.fingerprint256 === signer.x509.fingerprint256)) {
    throw new TrustedListError(`it is signed by "${signer.x509.subject.split('\n').join(', ')}", which is not an allowed signer of this list`);
  }
  return signer;
}

interface ParsedList {
  name: string;
  doc: Document;
  root: Element;
  territory: string;
  lotl: boolean;
  nextUpdate: string | null;
}

function parseList(file: TrustedListFile): ParsedList {
  let doc: Document;
  try {
    doc = parseXml(typeof file.xml === 'string' ? file.xml : decodeXmlBytes(file.xml));
  } catch (err) {
    throw new TrustedListError(`${file.name} is not well-formed XML (${(err as Error).message})`);
  }
  const root = doc.documentElement;
  if (!root || root.namespaceURI !== TSL || root.localName !== 'TrustServiceStatusList') throw new TrustedListError(`${file.name} is not an ETSI TS 119 612 trusted list`);
  const info = tsl(root, 'SchemeInformation');
  const nextUpdate = textOf(tslPath(info, 'NextUpdate', 'dateTime'));
  return {
    name: file.name,
    doc,
    root,
    territory: textOf(tsl(info, 'SchemeTerritory')),
    lotl: textOf(tsl(info, 'TSLType')) === LOTL_TYPE,
    nextUpdate: nextUpdate ? new Date(nextUpdate).toISOString() : null,
  };
}

/** The signing certificates a LOTL names for each territory's list (PointersToOtherTSL). */
function lotlPointers(list: ParsedList): Map<string, Cert[]> {
  const pointers = new Map<string, Cert[]>();
  const info = tsl(list.root, 'SchemeInformation');
  for (const pointer of childElements(tsl(info, 'PointersToOtherTSL') ?? list.root, TSL, 'OtherTSLPointer')) {
    const territory = descendants(pointer, TSL, 'SchemeTerritory').map((t) => textOf(t))[0];
    if (!territory) continue;
    pointers.set(territory, [...(pointers.get(territory) ?? []), ...certificatesIn(tsl(pointer, 'ServiceDigitalIdentities'))]);
  }
  return pointers;
}

interface StatusChange {
  type: string;
  status: string;
  start: Date;
}

/** A service's trusted period: the latest run of trusted statuses of an anchor type, from its start to the next change (open when current). */
export function trustedPeriod(changes: StatusChange[]): { from: Date; until?: Date } | undefined {
  const timeline = [...changes].filter((c) => !Number.isNaN(c.start.getTime())).sort((a, b) => a.start.getTime() - b.start.getTime());
  let period: { from: Date; until?: Date } | undefined;
  let open: Date | undefined;
  for (const change of timeline) {
    const trusted = TRUSTED_STATUSES.has(change.status) && ANCHOR_SERVICE_TYPES.has(change.type);
    if (trusted && !open) open = change.start;
    if (!trusted && open) {
      period = { from: open, until: change.start };
      open = undefined;
    }
  }
  return open ? { from: open } : period;
}

function serviceAnchors(list: ParsedList): PortableAnchor[] {
  const anchors: PortableAnchor[] = [];
  for (const provider of descendants(list.root, TSL, 'TrustServiceProvider')) {
    const providerName = englishName(tslPath(provider, 'TSPInformation', 'TSPName'));
    for (const service of childElements(tsl(provider, 'TSPServices') ?? provider, TSL, 'TSPService')) {
      const current = tsl(service, 'ServiceInformation');
      if (!current) continue;
      const instances = [current, ...childElements(tsl(service, 'ServiceHistory') ?? service, TSL, 'ServiceHistoryInstance')];
      const changes = instances.map((i) => ({ type: textOf(tsl(i, 'ServiceTypeIdentifier')), status: textOf(tsl(i, 'ServiceStatus')), start: new Date(textOf(tsl(i, 'StatusStartingTime'))) }));
      const period = trustedPeriod(changes);
      if (!period) continue;
      const source = `EU trusted list ${list.territory}: ${providerName} / ${englishName(tsl(current, 'ServiceName'))}`;
      const pems = certificatesIn(tsl(current, 'ServiceDigitalIdentity')).map((cert) => cert.x509.toString());
      for (const anchor of portableAnchors(pems, source)) {
        anchors.push({ ...anchor, from: period.from.toISOString(), ...(period.until ? { until: period.until.toISOString() } : {}) });
      }
    }
  }
  return anchors;
}

/**
 * Verifies the lists (LOTL first) and returns the anchors of their qualified services. Throws
 * TrustedListError naming the file when a list is unreadable, tampered with or signed by a
 * certificate neither the signers nor the LOTL allow.
 */
export function trustedListAnchors(files: TrustedListFile[], signerPems: string[]): { anchors: PortableAnchor[]; lists: TrustedListSummary[] } {
  const signers = signerPems.flatMap((pem) => {
    const cert = parseCert(decodeBase64(pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '')));
    return cert ? [cert] : [];
  });
  const lists = files.map(parseList);
  const allowedFor = new Map<string, Cert[]>();
  const summaries: TrustedListSummary[] = [];
  const anchors: PortableAnchor[] = [];
  const verify = (list: ParsedList, allowed: Cert[]) => {
    try {
      return verifyListSignature(list.doc, allowed);
    } catch (err) {
      throw new TrustedListError(`the trusted list ${list.name} (${list.territory || 'no territory'}) is refused: ${(err as Error).message}`);
    }
  };
  for (const list of lists.filter((l) => l.lotl)) {
    const signer = verify(list, signers);
    for (const [territory, certs] of lotlPointers(list)) allowedFor.set(territory, [...(allowedFor.get(territory) ?? []), ...certs]);
    summaries.push({ name: list.name, territory: list.territory, lotl: true, signer: signer.x509.subject.split('\n').join(', '), nextUpdate: list.nextUpdate, anchors: 0 });
  }
  for (const list of lists.filter((l) => !l.lotl)) {
    const signer = verify(list, [...signers, ...(allowedFor.get(list.territory) ?? [])]);
    const found = serviceAnchors(list);
    anchors.push(...found);
    summaries.push({ name: list.name, territory: list.territory, lotl: false, signer: signer.x509.subject.split('\n').join(', '), nextUpdate: list.nextUpdate, anchors: found.length });
  }
  return { anchors, lists: summaries };
}

/** TRUST_LISTS / TRUST_LIST_SIGNERS at start-up: the anchors, each list logged; a bad list stops start-up. */
export function loadTrustedListAnchors(config: { lists: string[]; listSignersFile?: string }, log: { info(msg: string): void; warn(msg: string): void }, now = new Date()): PortableAnchor[] {
  if (config.lists.length === 0) return [];
  const signers = readPemBundle(config.listSignersFile!, 'TRUST_LIST_SIGNERS');
  const files = config.lists.map((name) => {
    try {
      return { name, xml: readFileSync(name) };
    } catch (err) {
      throw new TrustedListError(`TRUST_LISTS: ${name} could not be read (${(err as Error).message})`);
    }
  });
  const { anchors, lists } = trustedListAnchors(files, signers);
  for (const list of lists) {
    log.info(`trusted list ${list.name} (${list.lotl ? 'LOTL' : list.territory}) signed by ${list.signer}: ${list.anchors} anchors`);
    if (list.nextUpdate && new Date(list.nextUpdate) < now) log.warn(`trusted list ${list.name} is past its NextUpdate (${list.nextUpdate}); fetch the current one`);
  }
  return anchors;
}
