import type { PdfView } from '../pdf/document.js';
import type { EmbeddedEvidence } from '../pki/revocation/check.js';

const MAX_ITEMS = 500;

/** OCSP responses and CRLs of the document security store (/DSS in the catalog), decoded. */
export function dssEvidence(view: PdfView): EmbeddedEvidence | null {
  const dss = view.dict(view.catalog?.get('DSS'));
  if (!dss) return null;
  const streams = (key: string) => (view.array(dss.get(key)) ?? []).slice(0, MAX_ITEMS).flatMap((ref) => view.streamData(ref) ?? []);
  const evidence: EmbeddedEvidence = { source: 'pdf-dss', ocsps: streams('OCSPs'), crls: streams('CRLs') };
  return evidence.ocsps.length || evidence.crls.length ? evidence : null;
}
