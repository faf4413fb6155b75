import { buildCms, type CmsOptions } from './cms.js';

/** Object bodies by object number, written as "n 0 obj <body> endobj". */
export type Objects = Record<number, string>;

const CONTENTS_HEX_LENGTH = 16384;

/** A tiny incremental PDF writer for verifier tests: every update is a classic xref section with /Prev. */
export class TestPdf {
  /** Field widgets listed in /AcroForm /Fields and the page's /Annots. */
  private readonly fieldNums = [7, 8, 9];

  private constructor(
    public bytes: Buffer,
    private lastXref: number,
    public size: number,
  ) {}

  private get fieldRefs(): string {
    return this.fieldNums.map((n) => `${n} 0 R`).join(' ');
  }

  /** Adds an empty signature field (in its own update); returns its object number. */
  addSignatureField(name: string): number {
    const num = this.size;
    this.fieldNums.push(num);
    this.update({
      [num]: `<< /FT /Sig /T (${name}) /Type /Annot /Subtype /Widget /Rect [0 0 0 0] /P 3 0 R /F 132 >>`,
      5: `<< /Fields [${this.fieldRefs}] /SigFlags 3 >>`,
      3: `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 6 0 R >> >> /Annots [${this.fieldRefs}] >>`,
    });
    return num;
  }

  /** One page ("Pay 100 EUR"), a text field "Name" and empty signature fields Signature1 (obj 7) and Signature2 (obj 9). */
  static base(): TestPdf {
    const content = 'BT /F1 24 Tf 72 700 Td (Pay 100 EUR) Tj ET';
    const objects: Objects = {
      1: '<< /Type /Catalog /Pages 2 0 R /AcroForm 5 0 R >>',
      2: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      3: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 6 0 R >> >> /Annots [7 0 R 8 0 R 9 0 R] >>',
      4: `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
      5: '<< /Fields [7 0 R 8 0 R 9 0 R] >>',
      6: '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
      7: '<< /FT /Sig /T (Signature1) /Type /Annot /Subtype /Widget /Rect [0 0 0 0] /P 3 0 R /F 132 >>',
      8: '<< /FT /Tx /T (Name) /V (Alice) /Type /Annot /Subtype /Widget /Rect [72 600 300 620] /P 3 0 R >>',
      9: '<< /FT /Sig /T (Signature2) /Type /Annot /Subtype /Widget /Rect [0 0 0 0] /P 3 0 R /F 132 >>',
    };
    const pdf = new TestPdf(Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1'), -1, 10);
    pdf.update(objects);
    return pdf;
  }

  /**
   * The document of `base()` as a hybrid-reference file the way Word writes one (ISO 32000-1 §7.5.8.4):
   * the AcroForm, the font and the fields live in an object stream (object 10) listed only by a hidden
   * xref stream (object 11, named by /XRefStm); the classic table lists them as free.
   */
  static hybridBase(): TestPdf {
    const base = TestPdf.base();
    const text = base.bytes.toString('latin1');
    const body = (num: number) => new RegExp(`\\n${num} 0 obj\\n([^]*?)\\nendobj\\n`).exec(text)![1]!;
    const packed = [5, 6, 7, 8, 9];
    let header = '';
    let content = '';
    for (const num of packed) {
      header += `${num} ${content.length} `;
      content += `${body(num)}\n`;
    }
    const objStm = `${header}\n${content}`;
    const parts: string[] = ['%PDF-1.5\n%\xe2\xe3\xcf\xd3\n'];
    const offsets = new Map<number, number>();
    const length = () => parts.reduce((n, p) => n + p.length, 0);
    const put = (num: number, value: string) => {
      offsets.set(num, length());
      parts.push(`${num} 0 obj\n${value}\nendobj\n`);
    };
    for (const num of [1, 2, 3, 4]) put(num, body(num));
    put(10, `<< /Type /ObjStm /N ${packed.length} /First ${header.length + 1} /Length ${objStm.length} >>\nstream\n${objStm}\nendstream`);
    const rows = packed.map((num, i) => [2, 10, i]);
    const be = (v: number, w: number) => Array.from({ length: w }, (_, i) => String.fromCharCode(Math.floor(v / 256 ** (w - 1 - i)) % 256)).join('');
    const data = rows.map(([t, a, b]) => be(t!, 1) + be(a!, 4) + be(b!, 2)).join('');
    const xrefStm = length();
    parts.push(`11 0 obj\n<< /Type /XRef /W [1 4 2] /Index [5 5] /Size 12 /Length ${data.length} >>\nstream\n${data}\nendstream\nendobj\n`);
    const xrefAt = length();
    let xref = 'xref\n0 12\n';
    for (let num = 0; num < 12; num++) {
      const at = num === 11 ? xrefStm : offsets.get(num);
      xref += at === undefined ? '0000000000 65535 f\r\n' : `${String(at).padStart(10, '0')} 00000 n\r\n`;
    }
    parts.push(`${xref}trailer\n<< /Size 12 /Root 1 0 R /XRefStm ${xrefStm} >>\nstartxref\n${xrefAt}\n%%EOF\n`);
    return new TestPdf(Buffer.from(parts.join(''), 'latin1'), xrefAt, 12);
  }

  /** Offset of the hidden xref stream of a `hybridBase()` document (its trailer's /XRefStm). */
  get firstXrefStm(): number {
    return Number(/\/XRefStm (\d+)/.exec(this.bytes.toString('latin1'))![1]);
  }

  /** Makes the next update's trailer carry this /Prev instead of the real one (a broken chain). */
  breakNextPrev(prev: number): this {
    this.lastXref = prev;
    return this;
  }

  /** Appends an incremental update holding `objects`; returns this for chaining. */
  update(objects: Objects, trailerExtra = ''): this {
    const parts: Buffer[] = [this.bytes];
    let offset = this.bytes.length;
    const offsets = new Map<number, number>();
    for (const [numText, body] of Object.entries(objects)) {
      const num = Number(numText);
      const chunk = Buffer.from(`${num} 0 obj\n${body}\nendobj\n`, 'latin1');
      offsets.set(num, offset);
      parts.push(chunk);
      offset += chunk.length;
      this.size = Math.max(this.size, num + 1);
    }
    const xrefAt = offset;
    let xref = 'xref\n';
    if (this.lastXref < 0) xref += '0 1\n0000000000 65535 f \n';
    for (const [num, at] of [...offsets].sort((a, b) => a[0] - b[0])) xref += `${num} 1\n${String(at).padStart(10, '0')} 00000 n \n`;
    const prev = this.lastXref >= 0 ? ` /Prev ${this.lastXref}` : '';
    xref += `trailer\n<< /Size ${this.size} /Root 1 0 R${prev}${trailerExtra} >>\nstartxref\n${xrefAt}\n%%EOF\n`;
    parts.push(Buffer.from(xref, 'latin1'));
    this.bytes = Buffer.concat(parts);
    this.lastXref = xrefAt;
    return this;
  }

  /**
   * Signs field `fieldNum` in a new incremental update: a signature dictionary with a placeholder,
   * then the real /ByteRange and a CMS over it (built by `cms`, default a proper detached CMS).
   */
  sign(options: {
    fieldNum?: number;
    fieldName?: string;
    cms: CmsOptions | ((signedBytes: Buffer) => Buffer);
    reason?: string;
    subFilter?: string;
    /** /Type of the signature dictionary (DocTimeStamp for a document time-stamp). */
    type?: string;
    docMdp?: 1 | 2 | 3;
    extraSigEntries?: string;
    /** Extra entries for the signed field's dictionary, e.g. its "/AP << /N n 0 R >>". */
    extraFieldEntries?: string;
    /** Entries kept in the AcroForm the signing update rewrites, e.g. "/DR << ... >>". */
    acroFormExtra?: string;
    /** Extra entries for the signing update's trailer, e.g. a repeated "/XRefStm n". */
    trailerExtra?: string;
  }): this {
    const fieldNum = options.fieldNum ?? 7;
    const sigNum = this.size;
    const reference = options.docMdp
      ? ` /Reference [<< /Type /SigRef /TransformMethod /DocMDP /TransformParams << /Type /TransformParams /P ${options.docMdp} /V /1.2 >> >>]`
      : '';
    const sigDict =
      `<< /Type /${options.type ?? 'Sig'} /Filter /Adobe.PPKLite /SubFilter /${options.subFilter ?? 'adbe.pkcs7.detached'} ` +
      `/ByteRange [0 0000000000 0000000000 0000000000] /Contents <${'0'.repeat(CONTENTS_HEX_LENGTH)}> ` +
      `/Reason (${options.reason ?? 'Approval'}) /M (D:20240101120000Z)${reference}${options.extraSigEntries ?? ''} >>`;
    const name = options.fieldName ?? (fieldNum === 7 ? 'Signature1' : 'Signature2');
    const objects: Objects = {
      [sigNum]: sigDict,
      [fieldNum]: `<< /FT /Sig /T (${name}) /Type /Annot /Subtype /Widget /Rect [0 0 0 0] /P 3 0 R /F 132 /V ${sigNum} 0 R${options.extraFieldEntries ? ` ${options.extraFieldEntries}` : ''} >>`,
      5: `<< /Fields [${this.fieldRefs}] /SigFlags 3${options.acroFormExtra ? ` ${options.acroFormExtra}` : ''} >>`,
    };
    if (options.docMdp) objects[1] = `<< /Type /Catalog /Pages 2 0 R /AcroForm 5 0 R /Perms << /DocMDP ${sigNum} 0 R >> >>`;
    const start = this.bytes.length;
    this.update(objects, options.trailerExtra ? ` ${options.trailerExtra}` : '');
    const text = this.bytes.toString('latin1');
    const brAt = text.indexOf('/ByteRange [', start) + '/ByteRange '.length;
    const contentsAt = text.indexOf('/Contents <', start) + '/Contents '.length;
    const gapEnd = contentsAt + CONTENTS_HEX_LENGTH + 2;
    const byteRange = `[0 ${contentsAt} ${gapEnd} ${this.bytes.length - gapEnd}]`;
    this.bytes.write(byteRange.padEnd('[0 0000000000 0000000000 0000000000]'.length, ' '), brAt, 'latin1');
    const signed = Buffer.concat([this.bytes.subarray(0, contentsAt), this.bytes.subarray(gapEnd)]);
    const cms = typeof options.cms === 'function' ? options.cms(signed) : buildCms(signed, options.cms);
    const hex = cms.toString('hex');
    if (hex.length > CONTENTS_HEX_LENGTH) throw new Error('CMS too large for the placeholder');
    this.bytes.write(hex, contentsAt + 1, 'latin1');
    return this;
  }

  /** Byte offset of the first occurrence of `needle` at or after `from`. */
  find(needle: string, from = 0): number {
    return this.bytes.indexOf(needle, from, 'latin1');
  }
}
