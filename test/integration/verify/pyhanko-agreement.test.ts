import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPdf, type SignatureReport, type VerifyReport } from '../../../src/documents/verify/index.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { Pyhanko, type PyhankoSignature } from '../../support/pyhanko.js';

/**
 * Differential test against pyHanko (../shared/oracles/pyhanko, run live): for every signed PDF of the
 * corpus, each signature's integrity (intact, signature value) and modification verdict equal
 * pyHanko's, except in the places listed in DIFFERENCES, each with its reason. The modification
 * verdict compares "allowed or refused" (refused = pyHanko OTHER or DocMDP not respected) and, when
 * both allow, the level (ours → pyHanko: none→NONE, archival→LTA_UPDATES, signatures and
 * formFilling→FORM_FILLING, annotations→ANNOTATIONS). Where pyHanko cannot read a file or a
 * signature, ours must not pass it either, unless listed.
 */
const DIRS = ['pdf-signed-suites', 'pdf-signed'].map((d) => path.join(CORPUS_DIR, d));
const LEVEL: Record<string, string> = { none: 'NONE', archival: 'LTA_UPDATES', signatures: 'FORM_FILLING', formFilling: 'FORM_FILLING', annotations: 'ANNOTATIONS', other: 'OTHER' };

/** Reasons that recur: where EU DSS and PAdES allow more than pyHanko, or pyHanko cannot judge. */
const WHY = {
  vri: 'pyHanko treats existing /VRI entries as immutable; PAdES and EU DSS let later LTV updates rewrite them (archival for us)',
  vriType: 'pyHanko rejects a /Type key inside /VRI; EU DSS validates the file (a /Type in the VRI dictionary shows nothing)',
  trailer: "an earlier trailer's /AdditionalStreams names an object a later revision fills; no display reader reads that Adobe key, EU DSS validates (pyHanko: OTHER or a KeyError)",
  timestampAppearance: 'a document time-stamp (or signature) in an invisible field with an appearance stream, or /DR gaining fonts with it: pyHanko counts the appearance as form filling, we as archival (nothing of it can be seen; PAdES allows time-stamps even after P1)',
  structure: 'the structure tree gains tags for the new signature widget (iText): EU DSS reports extension changes only, pyHanko OTHER; we allow additions to the logical structure, never changes to existing tags',
  renumbered: 'the page /Resources rewritten under a new object number with the same content: EU DSS finds no modification, pyHanko OTHER; same content shows the same page',
  linearized: 'pyHanko reads the linearized first revision as CONTIGUOUS_BLOCK_FROM_START and refuses what follows; EU DSS validates it',
  choiceField: 'a choice field updates /I (selected indices) with its value: EU DSS allows the form fill, pyHanko OTHER',
  fieldMdp: "pyHanko answers OTHER for objects replaced after a FieldMDP-locked signature; EU DSS sees extension and form-fill changes of fields the lock leaves out, as we do",
  typeSig: 'pyHanko refuses an RFC 3161 time-stamp stored with /Type /Sig; EU DSS and we read it as a document time-stamp (SubFilter ETSI.RFC3161)',
  periodName: 'pyHanko refuses a field name containing "."; EU DSS validates the file',
  doubleSignerInfo: 'pyHanko refuses a CMS with two SignerInfos; EU DSS validates the first, as we do',
  derOrder: 'signed attributes signed out of DER order (node-forge, these DSS samples): pyHanko, OpenSSL and NSS accept them; RFC 5652 §5.4 and EU DSS do not (HASH_FAILURE, the PKI layer\'s choice)',
  sneakyMk: 'pyHanko has no rule for /MK on a new signature field and answers OTHER; the field is invisible and signed, what follows the certification is a signature',
  appearanceWithoutValue: "an appearance replaced while the field's value stays as signed: EU DSS reports undefined changes and so do we; pyHanko accepts it as form filling",
  oneRange: 'a one-range /ByteRange: both hash the range; we stop at FORMAT_FAILURE before judging what follows, pyHanko also refuses (OTHER)',
  outOfRange: "the byte range leaves the signature's own /Contents uncovered in a way pyHanko still hashes: EU DSS says ByteRange not valid, and we do not check the value of a signature whose signed data cannot be located",
  rsaSha1: 'legacy adbe.x509.rsa_sha1: pyHanko does not list these signatures',
  pkcs7Sha1: 'an adbe.pkcs7.sha1 signature pyHanko does not list',
  pbad: 'a signature with SubFilter /PBAD.PAdES that pyHanko does not list (EU DSS lists it, as we do)',
};

/** file → reason for the whole file, or signature field → reason. */
const DIFFERENCES: Record<string, string | Record<string, string>> = {
  'dss-1696-Certipost-SHA512-extended-extended-LTA-2019-07-02_DSS.pdf': { 'Cryptolog-846272363': WHY.timestampAppearance, 'Cryptolog-1895426501': WHY.timestampAppearance, 'Cryptolog-871200259': WHY.timestampAppearance },
  'dss-1696-Certipost-SHA512-extended-extended-LTA-dss-5.4.pdf': { 'Cryptolog-846272363': WHY.timestampAppearance, 'Cryptolog-1895426501': WHY.timestampAppearance, 'Cryptolog-871200259': WHY.timestampAppearance },
  'dss-1959-pades-revoc-removed-from-dss-dict.pdf': { Signature1: WHY.timestampAppearance, Signature2: WHY.vri, Signature3: WHY.vri },
  'dss-2058-LTA-test.pdf': { Signature1: WHY.timestampAppearance },
  'dss-2236-annotation-and-visible-change.pdf': { ES_CERTIFYING_SIGNATURE: WHY.sneakyMk },
  'dss-2236-replace.pdf': { Signature2: WHY.appearanceWithoutValue },
  'dss-818-Signature-P-IT_ADO-1_HASH_FAILURE_ECDSA.pdf': { 'PrimeSign Signature1': WHY.derOrder },
  'dss-818-Signature-P-SK-1_HASH_FAILURE.pdf': { Signature1: WHY.derOrder, Signature2: WHY.derOrder, Signature3: WHY.derOrder, Signature4: WHY.derOrder, Signature5: WHY.derOrder },
  'dss-AD-RB.pdf': { 'SignHere_827f69f3-6da4-46a7-b473-9ba175a32d41': WHY.pbad, ENVELOPEID_04E32142CACE4C9DAB875C0FC264F2CF: WHY.derOrder },
  'dss-Certipost-SHA512-extended-LTA.pdf': { 'Cryptolog-846272363': WHY.timestampAppearance, 'Cryptolog-1895426501': WHY.timestampAppearance },
  'dss-DSS-1983.pdf': { Signature1: WHY.timestampAppearance },
  'dss-DSS-2199.pdf': { ENVELOPEID_924ED0CBBAD34947B69968B44C02BE17: WHY.timestampAppearance, Signature1: WHY.vri },
  'dss-DSS-2601.pdf': { Signature1: WHY.timestampAppearance },
  'dss-DSS-3298.pdf': { Signature1: WHY.timestampAppearance },
  'dss-DSS-3577.pdf': { 'SignHere_4c04142c-ee5a-448b-a3d5-b4c6d5063e59': WHY.fieldMdp },
  'dss-PAdES-LT.pdf': { Signature4: WHY.vri },
  'dss-Signature-P-BG_BOR-2.pdf': { Signature1: WHY.timestampAppearance },
  'dss-Signature-P-DE_SCI-4.pdf': { Signatur_1459435797602: WHY.renumbered },
  'dss-Signature-P-FR_CS-5.pdf': { PRF_1: WHY.timestampAppearance, 'SigCS-1460553902201': WHY.vri },
  'dss-Signature-P-HU_MIC-3.pdf': { Signature1: WHY.timestampAppearance },
  'dss-Signature-P-HU_POL-3.pdf': { Signature1: WHY.timestampAppearance },
  'dss-Signature-P-HU_POL-7.pdf': { 'Signature-20191101-155926': WHY.vri, 'DocumentTimeStamp-20191101-155421': WHY.vri },
  'dss-Signature-P-SK-6.pdf': { Signature2: WHY.typeSig },
  'dss-adbe_crl_signed.pdf': { Signature2: WHY.vriType, 'Sig 2': WHY.vriType },
  'dss-belgian_pki_multiple_ocsps.pdf': { Signature1: WHY.timestampAppearance },
  'dss-cookbook-mra-john-doe-lta.pdf': { Signature1: WHY.trailer },
  'dss-doc-firmado.pdf': { Signature1: WHY.timestampAppearance },
  'dss-er-Signature-P-LT-ef971596.pdf': { Signature1: WHY.trailer, Signature2: WHY.trailer },
  'dss-muestra-firmado-firmado.pdf': { Signature3: WHY.timestampAppearance },
  'dss-pades-enveloping-other-pdf.pdf': { Signature1: WHY.timestampAppearance },
  'dss-pades-lt-extended-abde.pdf': { Signature2: WHY.trailer },
  'dss-pades-lt-extended-dss.pdf': { Signature1: WHY.trailer, Signature2: WHY.trailer },
  'dss-pades-lta-copied-doctst.pdf': { Signature1: WHY.trailer },
  'dss-pades-ltv-from-epes.pdf': { Signature1: WHY.trailer, Signature2: WHY.trailer },
  'dss-pades-ltv-with-reason.pdf': { Signature1: WHY.trailer, Signature2: WHY.trailer },
  'dss-pades-ltv.pdf': { Signature1: WHY.trailer, Signature2: WHY.trailer },
  'dss-pades-ocsp-archiveCutOff-invalid.pdf': { Signature2: WHY.linearized },
  'dss-pades-same-border-annotations.pdf': { 'El.Podpis - PAdES [0]': WHY.periodName },
  'dss-pades-signed-filled-form.pdf': { Signature1: WHY.choiceField },
  'dss-pades-t-duplicated-doctst.pdf': { Signature1: WHY.trailer, Signature2: WHY.trailer },
  'dss-pades-t-level-extended.pdf': { Signature1: WHY.timestampAppearance },
  'dss-pades-tst-with-null-type.pdf': { Signature1: WHY.timestampAppearance, Signature2: WHY.typeSig },
  'dss-pades-tst-with-sig-type.pdf': { Signature1: WHY.trailer, Signature2: WHY.typeSig },
  'dss-pades_with_orphan_ocsp_cert_refs.pdf': { Signature1: WHY.timestampAppearance, Signature2: WHY.typeSig },
  'dss-pdf-double-signer-info.pdf': WHY.doubleSignerInfo,
  'dss-pdf-self-issued-ocsp.pdf': { Signature1: WHY.timestampAppearance },
  'dss-pdf-signed-out-of-byteRange.pdf': { Signature1: WHY.outOfRange },
  'dss-pdf-structtreeroot-changes.pdf': { sign3: WHY.structure },
  'dss-pdfa-testdoc-signed.pdf': { Signature1: WHY.timestampAppearance },
  'dss-timestamped-fields.pdf': { signature1: WHY.structure },
  'dss-wrong-digest-algo.pdf': { Sig_12004651: WHY.pkcs7Sha1, Sig_25021452: WHY.vriType, Sig_530649210: WHY.vriType },
  'pyhanko-coverage-anomalies-one-byterange.pdf': { Sig1: WHY.oneRange },
  'signpdf-signed.pdf': { Signature1: WHY.derOrder },
  'signpdf-signed-once.pdf': { Signature1: WHY.derOrder },
  'signpdf-signed-twice.pdf': { Signature1: WHY.derOrder, Signature2: WHY.derOrder },
  'verifypdf-bytes-added.pdf': { Signature1: WHY.derOrder },
  'verifypdf-sample06-three-sigs-x509-rsa-sha1.pdf': { 'Alice-1-1016955823': WHY.rsaSha1, 'Alice-2-1074011529': WHY.rsaSha1, 'Alice-3-1014426354': WHY.rsaSha1 },
};

let pyhanko: Pyhanko;
beforeAll(() => {
  pyhanko = new Pyhanko();
});
afterAll(() => pyhanko?.close());

const files = DIRS.flatMap((dir) => readdirSync(dir).filter((f) => f.endsWith('.pdf')).map((f) => path.join(dir, f)));

function ourReport(file: string): VerifyReport | Error {
  try {
    return verifyPdf(readFileSync(file), { trustRoots: [] });
  } catch (err) {
    return err as Error;
  }
}

const passes = (s: SignatureReport) => s.intact && s.cryptoValid && s.modificationsAfter !== 'other' && s.docMdp?.respected !== false && s.indication !== 'TOTAL_FAILED';

function compare(ours: SignatureReport, theirs: PyhankoSignature | undefined): string | undefined {
  if (!theirs) return 'pyHanko does not list it';
  if (theirs.error) return passes(ours) ? `pyHanko fails (${theirs.error}) where ours passes` : undefined;
  if (theirs.intact !== ours.intact || theirs.valid !== ours.cryptoValid) {
    return `integrity: ours intact=${ours.intact} valid=${ours.cryptoValid}, pyHanko intact=${theirs.intact} valid=${theirs.valid}`;
  }
  const oursAllowed = ours.modificationsAfter !== 'other' && ours.docMdp?.respected !== false;
  const theirsAllowed = theirs.level !== 'OTHER' && theirs.docmdp_ok !== false;
  if (oursAllowed !== theirsAllowed || (oursAllowed && LEVEL[ours.modificationsAfter] !== theirs.level)) {
    return `changes: ours ${ours.modificationsAfter}${ours.docMdp?.respected === false ? ' (DocMDP not respected)' : ''}, pyHanko ${theirs.level}${theirs.docmdp_ok === false ? ' (docmdp-FAIL)' : ''}`;
  }
  return undefined;
}

describe('verify agrees with pyHanko on every signed corpus PDF, except where DSS/PAdES allow more or pyHanko cannot judge', () => {
  it(`${files.length} files`, async () => {
    const unexplained: string[] = [];
    const happened = new Set<string>();
    for (const file of files) {
      const name = path.basename(file);
      const ours = ourReport(file);
      const theirs = await pyhanko.validate(file);
      const listed = DIFFERENCES[name];
      if (ours instanceof Error || theirs.error) {
        // One of the two cannot read the file: ours must not pass anything then, unless listed.
        const oursPass = !(ours instanceof Error) && ours.signatures.some(passes);
        if (oursPass && typeof listed === 'string') happened.add(name);
        else if (oursPass) unexplained.push(`${name}: ours passes a signature, pyHanko ${theirs.error}`);
        continue;
      }
      for (const sig of [...ours.signatures, ...ours.timestamps]) {
        const problem = compare(sig, theirs.signatures!.find((t) => t.field === sig.field));
        if (!problem) continue;
        const key = `${name}#${sig.field}`;
        if (typeof listed === 'string') happened.add(name);
        else if (listed?.[sig.field]) happened.add(key);
        else unexplained.push(`${name} "${sig.field}": ${problem}`);
      }
    }
    expect(unexplained).toEqual([]);
    // Every listed difference still happens: one that no longer does must leave the list.
    const keys = Object.entries(DIFFERENCES).flatMap(([file, r]) => (typeof r === 'string' ? [file] : Object.keys(r).map((f) => `${file}#${f}`)));
    expect(keys.filter((key) => !happened.has(key))).toEqual([]);
  }, 1_200_000);
});
