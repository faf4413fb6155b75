import { execFileSync } from 'node:child_process';
import { buildCms } from '../unit/verify/helpers/cms.js';
import type { TestIdentity } from '../unit/verify/helpers/pki.js';
import { appendRevision, lastByteRange, withKey, type QpdfReader } from './pdf-attacks.js';

/**
 * Generators for the attack classes of issue 22 that a verifier judging a changed object by the
 * object alone lets through, and for the honest changes such a verifier wrongly refuses:
 *  - object reuse: an object allowed to change in one role (document information, DSS, metadata,
 *    an annotation, a hidden field's appearance) is prepared, before signing, to also be a page-tree
 *    node, the optional-content switch, a stamp's appearance or what a stamp draws;
 *  - type spoofing: page content redefined with /Type /ObjStm or /XRef;
 *  - certification: a new visible signature field after P1/P2 (Sneaky Signature Attack, Mainka et
 *    al.), a field filled that a FieldMDP lock froze, an annotation after P2;
 *  - honest updates (must stay valid): catalog /Version bump, a DSS revision that rewrites the
 *    catalog under a new number, Acrobat's /F flag on the field it signs, a widget in /Kids without
 *    /Parent, filling a field the lock leaves out.
 * Every document starts from `baseDocument` (object numbers fixed, so generators can name them),
 * is prepared, signed by the service (approval, or certified with `certify`) or by pyHanko
 * (test/support/pyhanko.ts), then changed with
 * appendRevision; poppler's rendering tells whether a forgery really changed what is shown.
 */

/** The signing a case needs (pyHanko certification levels, FieldMDP locks) or the service's approval signature. */
export type TargetKind = 'service' | 'service-P1' | 'service-P2' | 'service-P3' | 'pyhanko' | 'pyhanko-P1' | 'pyhanko-P2' | 'pyhanko-P3' | 'pyhanko-lock-all' | 'pyhanko-lock-include-name' | 'pyhanko-lock-exclude-name';

export interface UseCase {
  /** Attack class of issue 22 (or "false rejection" for an honest update). */
  family: string;
  name: string;
  /** Overrides of base objects and extra objects, by number, written into the unsigned document. */
  prepare?: { objects?: Record<number, string>; trailerInfo?: number };
  targets: TargetKind[];
  /** The change after signing. `ctx.signer` signs a further field when the change is a signature. */
  apply(signed: Buffer, reader: QpdfReader, ctx: ApplyContext): Buffer;
  /** `refused`: a forgery (poppler must show a change); `allowed`: an honest update that stays valid. */
  expect: 'refused' | 'allowed';
}

export interface ApplyContext {
  signer: TestIdentity;
}

const CONTENT = 'BT /F1 24 Tf 72 700 Td (Pay 100 EUR to Alice) Tj ET';
const stream = (dict: string, data: string) => `<< ${dict} /Length ${Buffer.byteLength(data, 'latin1')} >>\nstream\n${data}\nendstream`;
const form = (data: string, bbox = '[0 0 400 60]', resources = '<< /Font << /F1 6 0 R /Helv 6 0 R >> >>') =>
  stream(`/Type /XObject /Subtype /Form /BBox ${bbox} /Resources ${resources}`, data);
const VOID = 'BT /F1 30 Tf 10 20 Td (CONTRACT VOID) Tj ET';
const WHITE_OUT = '1 1 1 rg 0 0 400 60 re f 0 g BT /F1 24 Tf 4 20 Td (Pay 900 EUR to Mallory) Tj ET';

/** Objects of the unsigned base document: one page of text, a filled text field "Name". */
export const BASE: Record<number, string> = {
  1: '<< /Type /Catalog /Pages 2 0 R /AcroForm 5 0 R >>',
  2: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
  3: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 6 0 R >> >> /Annots [8 0 R] >>',
  4: stream('', CONTENT),
  5: '<< /Fields [8 0 R] /DA (/Helv 0 Tf 0 g) /DR << /Font << /Helv 6 0 R >> >> >>',
  6: '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
  7: '<< /Title (Contract) /Producer (docproc attack generator) >>',
  8: '<< /FT /Tx /T (Name) /V (Alice) /DA (/Helv 12 Tf 0 g) /Type /Annot /Subtype /Widget /Rect [72 600 300 630] /F 4 /P 3 0 R /AP << /N 9 0 R >> >>',
  9: form('/Tx BMC BT /Helv 12 Tf 2 10 Td (Alice) Tj ET EMC', '[0 0 228 30]'),
};

/** A classic single-revision PDF of the base objects with `overrides` (numbers above 9 are extra objects). */
export function baseDocument(prepare: UseCase['prepare'] = {}): Buffer {
  const objects = { ...BASE, ...prepare.objects };
  const nums = Object.keys(objects).map(Number).sort((a, b) => a - b);
  const size = nums.at(-1)! + 1;
  let out = '%PDF-1.7\n%\xe2\xe3\xcf\xd3\n';
  const offsets = new Map<number, number>();
  for (const num of nums) {
    offsets.set(num, Buffer.byteLength(out, 'latin1'));
    out += `${num} 0 obj\n${objects[num]}\nendobj\n`;
  }
  const xrefAt = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${size}\n`;
  for (let num = 0; num < size; num++) {
    const at = offsets.get(num);
    out += at === undefined ? '0000000000 65535 f\r\n' : `${String(at).padStart(10, '0')} 00000 n\r\n`;
  }
  out += `trailer\n<< /Size ${size} /Root 1 0 R /Info ${prepare.trailerInfo ?? 7} 0 R /ID [<00112233445566778899aabbccddeeff> <00112233445566778899aabbccddeeff>] >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** poppler's rendering of page 1 (gray, 30 dpi): two files that show the same page give the same bytes. */
export function renderFirstPage(pdf: Buffer): Buffer {
  return execFileSync('pdftoppm', ['-r', '30', '-f', '1', '-l', '1', '-gray', '-'], { input: pdf, maxBuffer: 64 * 1024 * 1024, stdio: ['pipe', 'pipe', 'ignore'] });
}

const CONTENTS_HEX = 16384;

/**
 * Signs an existing or new field in an incremental update, as a third-party tool would: `objects`
 * receives `sigNum` (the number of the signature dictionary) to write the field and what else the
 * update holds.
 */
export function signInUpdate(pdf: Buffer, reader: QpdfReader, signer: TestIdentity, objects: (sigNum: number) => Map<number, string>): Buffer {
  const sigNum = reader.facts(pdf).size;
  const sig = `<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /adbe.pkcs7.detached /ByteRange [0 0000000000 0000000000 0000000000] /Contents <${'0'.repeat(CONTENTS_HEX)}> /M (D:20250101120000Z) >>`;
  const updated = appendRevision(pdf, reader, { objects: new Map([[sigNum, sig], ...objects(sigNum)]) });
  const text = updated.toString('latin1');
  const contentsAt = text.indexOf('/Contents <', pdf.length) + '/Contents '.length;
  const gapEnd = contentsAt + CONTENTS_HEX + 2;
  const { start, end } = lastByteRange(updated);
  updated.write(`[0 ${contentsAt} ${gapEnd} ${updated.length - gapEnd}]`.padEnd(end - start, ' '), start, 'latin1');
  const cms = buildCms(Buffer.concat([updated.subarray(0, contentsAt), updated.subarray(gapEnd)]), { signer }).toString('hex');
  updated.write(cms, contentsAt + 1, 'latin1');
  return updated;
}

/** The newest body of object `num` as qpdf prints it. */
const show = (pdf: Buffer, reader: QpdfReader, num: number) => reader.show(pdf, num).trim();
/** An annotation list with `num` added, from the page's current /Annots. */
const annotsWith = (pdf: Buffer, reader: QpdfReader, ...nums: number[]) => {
  const page = show(pdf, reader, 3);
  const current = /\/Annots\s*\[([^\]]*)\]/.exec(page)?.[1] ?? '';
  return withKey(page, 'Annots', `[${current} ${nums.map((n) => `${n} 0 R`).join(' ')}]`);
};
const fieldsWith = (pdf: Buffer, reader: QpdfReader, ...nums: number[]) => {
  const acroForm = show(pdf, reader, 5);
  const current = /\/Fields\s*\[([^\]]*)\]/.exec(acroForm)?.[1] ?? '';
  return withKey(acroForm, 'Fields', `[${current} ${nums.map((n) => `${n} 0 R`).join(' ')}]`);
};

/** Optional content: text drawn only when OCG 20 is on; its default configuration (object 21) turns it off. */
const OC_PAGE = '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents [4 0 R 22 0 R] /Resources << /Font << /F1 6 0 R >> /Properties << /oc1 20 0 R >> >> /Annots [8 0 R] >>';
const OC_OBJECTS = (config: string): Record<number, string> => ({
  3: OC_PAGE,
  20: '<< /Type /OCG /Name (Hidden terms) >>',
  21: config,
  22: stream('', `/OC /oc1 BDC BT /F1 36 Tf 72 400 Td (CONTRACT VOID) Tj ET EMC`),
});

/** A hidden text field "Hidden" (object 24) and a visible stamp (26) on the page, in the form and /Annots. */
const HIDDEN_FIELD_AND_STAMP = (stampAppearance: number): Record<number, string> => ({
  3: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 6 0 R >> >> /Annots [8 0 R 24 0 R 26 0 R] >>',
  5: '<< /Fields [8 0 R 24 0 R] /DA (/Helv 0 Tf 0 g) /DR << /Font << /Helv 6 0 R >> >> >>',
  24: '<< /FT /Tx /T (Hidden) /V (a) /Type /Annot /Subtype /Widget /Rect [0 0 400 60] /F 2 /P 3 0 R /AP << /N 25 0 R >> >>',
  25: form('BT /F1 24 Tf 10 20 Td (APPROVED) Tj ET'),
  26: `<< /Type /Annot /Subtype /Stamp /Rect [72 300 472 360] /F 4 /P 3 0 R /AP << /N ${stampAppearance} 0 R >> >>`,
});

const ALL_SIGNERS: TargetKind[] = ['service', 'service-P1', 'service-P2', 'service-P3', 'pyhanko', 'pyhanko-P1', 'pyhanko-P2', 'pyhanko-P3'];
const CERTIFIED_NO_ANNOTATIONS: TargetKind[] = ['service-P1', 'service-P2', 'pyhanko-P1', 'pyhanko-P2'];

export const USE_CASES: UseCase[] = [
  {
    family: 'object reuse',
    name: 'the trailer /Info is the page-tree root; an "information update" rotates the page',
    prepare: { trailerInfo: 2 },
    targets: ALL_SIGNERS,
    apply: (pdf, reader) => appendRevision(pdf, reader, { objects: new Map([[2, withKey(show(pdf, reader, 2), 'Rotate', '90')]]) }),
    expect: 'refused',
  },
  {
    family: 'object reuse',
    name: 'the trailer /Info is the optional-content default configuration; an "information update" shows the hidden terms',
    prepare: { objects: { ...OC_OBJECTS('<< /Name (Default) /OFF [20 0 R] >>'), 1: '<< /Type /Catalog /Pages 2 0 R /AcroForm 5 0 R /OCProperties << /OCGs [20 0 R] /D 21 0 R >> >>' }, trailerInfo: 21 },
    targets: ALL_SIGNERS,
    apply: (pdf, reader) => appendRevision(pdf, reader, { objects: new Map([[21, '<< /Name (Default) /OFF [] /ON [20 0 R] /Title (Contract v2) >>']]) }),
    expect: 'refused',
  },
  {
    family: 'object reuse',
    name: 'the /DSS is the optional-content default configuration; a "DSS update" shows the hidden terms',
    prepare: { objects: { ...OC_OBJECTS('<< /OFF [20 0 R] >>'), 1: '<< /Type /Catalog /Pages 2 0 R /AcroForm 5 0 R /DSS 21 0 R /OCProperties << /OCGs [20 0 R] /D 21 0 R >> >>' } },
    targets: ALL_SIGNERS,
    apply: (pdf, reader) => {
      const cert = reader.facts(pdf).size;
      return appendRevision(pdf, reader, { objects: new Map([[cert, stream('', 'certificate')], [21, `<< /OFF [] /ON [20 0 R] /Certs [${cert} 0 R] >>`]]) });
    },
    expect: 'refused',
  },
  {
    family: 'object reuse',
    name: 'an annotation that is also the page-tree root; an "annotation change" rotates the page',
    prepare: {
      objects: {
        2: '<< /Type /Pages /Kids [3 0 R] /Count 1 /Subtype /Text /Rect [10 10 30 30] /Contents (note) >>',
        3: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 6 0 R >> >> /Annots [8 0 R 2 0 R] >>',
      },
    },
    targets: ['service', 'service-P3', 'pyhanko', 'pyhanko-P3'],
    apply: (pdf, reader) => appendRevision(pdf, reader, { objects: new Map([[2, withKey(withKey(show(pdf, reader, 2), 'Contents', '(edited note)'), 'Rotate', '90')]]) }),
    expect: 'refused',
  },
  {
    family: 'object reuse',
    name: 'the catalog /Metadata is what a stamp draws; a "metadata update" redraws the stamp after a certification',
    prepare: {
      objects: {
        1: '<< /Type /Catalog /Pages 2 0 R /AcroForm 5 0 R /Metadata 23 0 R >>',
        3: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 6 0 R >> >> /Annots [8 0 R 26 0 R] >>',
        23: stream('/Type /Metadata /Subtype /XML /BBox [0 0 400 60] /Resources << /Font << /F1 6 0 R >> >>', '<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/></x:xmpmeta><?xpacket end="r"?>'),
        26: '<< /Type /Annot /Subtype /Stamp /Rect [72 300 472 360] /F 4 /P 3 0 R /AP << /N 23 0 R >> >>',
      },
    },
    targets: CERTIFIED_NO_ANNOTATIONS,
    apply: (pdf, reader) => appendRevision(pdf, reader, { objects: new Map([[23, stream('/Type /Metadata /Subtype /XML /BBox [0 0 400 60] /Resources << /Font << /F1 6 0 R >> >>', VOID)]]) }),
    expect: 'refused',
  },
  {
    family: 'object reuse',
    name: 'a hidden field and a visible stamp share one appearance stream; "form filling" of the hidden field redraws the stamp',
    prepare: { objects: HIDDEN_FIELD_AND_STAMP(25) },
    targets: CERTIFIED_NO_ANNOTATIONS,
    apply: (pdf, reader) => appendRevision(pdf, reader, { objects: new Map([[24, withKey(show(pdf, reader, 24), 'V', '(b)')], [25, form(VOID)]]) }),
    expect: 'refused',
  },
  {
    family: 'object reuse',
    name: "a hidden field's appearance is nested in a visible stamp's appearance; \"form filling\" redraws the stamp",
    prepare: { objects: { ...HIDDEN_FIELD_AND_STAMP(27), 27: form('/X0 Do', '[0 0 400 60]', '<< /XObject << /X0 25 0 R >> >>') } },
    targets: CERTIFIED_NO_ANNOTATIONS,
    apply: (pdf, reader) => appendRevision(pdf, reader, { objects: new Map([[24, withKey(show(pdf, reader, 24), 'V', '(b)')], [25, form(VOID)]]) }),
    expect: 'refused',
  },
  {
    family: 'object reuse',
    name: "the trailer /Info is a visible field's appearance stream; an \"information update\" redraws the field",
    prepare: { trailerInfo: 9 },
    targets: ALL_SIGNERS,
    apply: (pdf, reader) => appendRevision(pdf, reader, { objects: new Map([[9, form('BT /Helv 12 Tf 2 10 Td (Mallory, 900 EUR) Tj ET', '[0 0 228 30]')]]) }),
    expect: 'refused',
  },
  ...(['ObjStm', 'XRef'] as const).map(
    (type): UseCase => ({
      family: 'type spoofing',
      name: `the page content stream redefined with /Type /${type}`,
      targets: ALL_SIGNERS,
      apply: (pdf, reader) => appendRevision(pdf, reader, { objects: new Map([[4, stream(type === 'ObjStm' ? '/Type /ObjStm /N 0 /First 0' : '/Type /XRef /W [1 1 1] /Size 1', VOID)]]) }),
      expect: 'refused',
    }),
  ),
  {
    family: 'certification',
    name: 'a new visible signature field whose appearance covers the certified text (Sneaky Signature Attack), left unsigned',
    targets: CERTIFIED_NO_ANNOTATIONS,
    apply: (pdf, reader) => {
      const [field, ap] = [reader.facts(pdf).size, reader.facts(pdf).size + 1];
      return appendRevision(pdf, reader, {
        objects: new Map([
          [field, `<< /FT /Sig /T (Witness) /Type /Annot /Subtype /Widget /Rect [68 690 468 750] /F 4 /P 3 0 R /AP << /N ${ap} 0 R >> >>`],
          [ap, form(WHITE_OUT)],
          [3, annotsWith(pdf, reader, field)],
          [5, fieldsWith(pdf, reader, field)],
        ]),
      });
    },
    expect: 'refused',
  },
  {
    family: 'certification',
    name: 'a new visible signature field whose appearance covers the certified text (Sneaky Signature Attack), signed',
    targets: CERTIFIED_NO_ANNOTATIONS,
    apply: (pdf, reader, { signer }) =>
      signInUpdate(pdf, reader, signer, (sig) => {
        const [field, ap] = [sig + 1, sig + 2];
        return new Map([
          [field, `<< /FT /Sig /T (Witness) /V ${sig} 0 R /Type /Annot /Subtype /Widget /Rect [68 690 468 750] /F 132 /P 3 0 R /AP << /N ${ap} 0 R >> >>`],
          [ap, form(WHITE_OUT)],
          [3, annotsWith(pdf, reader, field)],
          [5, fieldsWith(pdf, reader, field)],
        ]);
      }),
    expect: 'refused',
  },
  ...(['pyhanko-lock-include-name', 'pyhanko-lock-all'] as const).map(
    (target): UseCase => ({
      family: 'certification',
      name: `a field the signature locked (FieldMDP ${target.endsWith('all') ? '/All' : '/Include [Name]'}) is filled afterwards`,
      targets: [target],
      apply: (pdf, reader) => {
        const ap = reader.facts(pdf).size;
        return appendRevision(pdf, reader, {
          objects: new Map([
            [8, withKey(withKey(show(pdf, reader, 8), 'V', '(Mallory)'), 'AP', `<< /N ${ap} 0 R >>`)],
            [ap, form('/Tx BMC BT /Helv 12 Tf 2 10 Td (Mallory) Tj ET EMC', '[0 0 228 30]')],
          ]),
        });
      },
      expect: 'refused',
    }),
  ),
  {
    family: 'certification',
    name: 'an annotation covering the text after a certification that allows form filling only',
    targets: CERTIFIED_NO_ANNOTATIONS,
    apply: (pdf, reader) => {
      const [annot, ap] = [reader.facts(pdf).size, reader.facts(pdf).size + 1];
      return appendRevision(pdf, reader, {
        objects: new Map([
          [annot, `<< /Type /Annot /Subtype /Square /Rect [68 690 468 750] /F 4 /P 3 0 R /AP << /N ${ap} 0 R >> >>`],
          [ap, form(WHITE_OUT)],
          [3, annotsWith(pdf, reader, annot)],
        ]),
      });
    },
    expect: 'refused',
  },
  {
    family: 'annotations where allowed',
    name: 'an annotation added after an approval signature or a P3 certification',
    targets: ['service', 'service-P3', 'pyhanko', 'pyhanko-P3'],
    apply: (pdf, reader) => {
      const [annot, ap] = [reader.facts(pdf).size, reader.facts(pdf).size + 1];
      return appendRevision(pdf, reader, {
        objects: new Map([
          [annot, `<< /Type /Annot /Subtype /Square /Rect [400 100 500 150] /F 4 /P 3 0 R /Contents (reviewed) /AP << /N ${ap} 0 R >> >>`],
          [ap, form('1 0 0 RG 2 w 2 2 96 46 re S', '[0 0 100 50]')],
          [3, annotsWith(pdf, reader, annot)],
        ]),
      });
    },
    expect: 'allowed',
  },
  {
    family: 'false rejection',
    name: 'form filling with a matching appearance after a P2 certification, and of a field the lock excludes',
    targets: ['service-P2', 'pyhanko-P2', 'pyhanko-lock-exclude-name', 'pyhanko', 'service'],
    apply: (pdf, reader) => {
      const ap = reader.facts(pdf).size;
      return appendRevision(pdf, reader, {
        objects: new Map([
          [8, withKey(withKey(show(pdf, reader, 8), 'V', '(Bob)'), 'AP', `<< /N ${ap} 0 R >>`)],
          [ap, form('/Tx BMC BT /Helv 12 Tf 2 10 Td (Bob) Tj ET EMC', '[0 0 228 30]')],
        ]),
      });
    },
    expect: 'allowed',
  },
  {
    family: 'false rejection',
    name: 'the catalog /Version bumped',
    targets: ALL_SIGNERS,
    apply: (pdf, reader) => {
      const root = reader.facts(pdf).root;
      return appendRevision(pdf, reader, { objects: new Map([[root, withKey(show(pdf, reader, root), 'Version', '/2.0')]]) });
    },
    expect: 'allowed',
  },
  {
    family: 'false rejection',
    name: 'a DSS revision that rewrites the catalog under a new number with the same content plus /DSS',
    targets: ALL_SIGNERS,
    apply: (pdf, reader) => {
      const facts = reader.facts(pdf);
      const [catalog, dss, cert] = [facts.size, facts.size + 1, facts.size + 2];
      return appendRevision(pdf, reader, {
        root: `${catalog} 0 R`,
        objects: new Map([
          [catalog, withKey(show(pdf, reader, facts.root), 'DSS', `${dss} 0 R`)],
          [dss, `<< /Type /DSS /Certs [${cert} 0 R] >>`],
          [cert, stream('', 'certificate bytes')],
        ]),
      });
    },
    expect: 'allowed',
  },
  {
    family: 'false rejection',
    name: 'Acrobat signs an empty field prepared before the first signature and sets its widget /F (4 to 132)',
    prepare: {
      objects: {
        3: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 6 0 R >> >> /Annots [8 0 R 30 0 R] >>',
        5: '<< /Fields [8 0 R 30 0 R] /DA (/Helv 0 Tf 0 g) /DR << /Font << /Helv 6 0 R >> >> >>',
        30: '<< /FT /Sig /T (Approver) /Type /Annot /Subtype /Widget /Rect [0 0 0 0] /F 4 /P 3 0 R >>',
      },
    },
    targets: ['service', 'service-P2', 'service-P3', 'pyhanko', 'pyhanko-P2', 'pyhanko-P3'],
    apply: (pdf, reader, { signer }) => signInUpdate(pdf, reader, signer, (sig) => new Map([[30, withKey(withKey(show(pdf, reader, 30), 'V', `${sig} 0 R`), 'F', '132')]])),
    expect: 'allowed',
  },
  {
    family: 'false rejection',
    name: 'a signature field whose widget sits in /Kids without /Parent is signed later',
    prepare: {
      objects: {
        3: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 6 0 R >> >> /Annots [8 0 R 31 0 R] >>',
        5: '<< /Fields [8 0 R 30 0 R] /DA (/Helv 0 Tf 0 g) /DR << /Font << /Helv 6 0 R >> >> >>',
        30: '<< /FT /Sig /T (Approver) /Kids [31 0 R] >>',
        31: '<< /Type /Annot /Subtype /Widget /Rect [0 0 0 0] /F 132 /P 3 0 R >>',
      },
    },
    targets: ['service', 'service-P2', 'pyhanko', 'pyhanko-P2'],
    apply: (pdf, reader, { signer }) => signInUpdate(pdf, reader, signer, (sig) => new Map([[30, withKey(show(pdf, reader, 30), 'V', `${sig} 0 R`)]])),
    expect: 'allowed',
  },
];
