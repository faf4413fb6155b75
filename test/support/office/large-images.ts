import { createDeflate } from 'node:zlib';
import PizZip from 'pizzip';
import { buildDocx, pngChunk } from '../annotate/docx-builder.js';

/**
 * A small DOCX that costs LibreOffice a lot of memory: `count` solid-colour PNGs of `side` × `side`
 * pixels, each a few hundred KB on disk (deflate of identical rows) but side² × 4 bytes once decoded
 * (10 000² ≈ 400 MB). Well inside every size, entry and ratio limit of the ZIP guard: the images are
 * stored, not deflated again, and their PNG bytes are what they are.
 */
export async function largeImagesDocx(count: number, side: number): Promise<Buffer> {
  const zip = new PizZip(buildDocx({ body: Array.from({ length: count }, (_, i) => inlinePicture(i)).join('') }));
  let relationships = zip.file('word/_rels/document.xml.rels')!.asText();
  const types = zip.file('[Content_Types].xml')!.asText().replace('<Default Extension="xml"', '<Default Extension="png" ContentType="image/png"/><Default Extension="xml"');
  for (let i = 0; i < count; i++) {
    // A different colour each, so LibreOffice cannot share one decoded bitmap between them.
    zip.file(`word/media/p${i}.png`, await solidPng(side, side, [(i * 37) % 256, (i * 91) % 256, 200]), { compression: 'STORE' } as never);
    relationships = relationships.replace('</Relationships>', `<Relationship Id="rIdImg${i}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/p${i}.png"/></Relationships>`);
  }
  zip.file('word/_rels/document.xml.rels', relationships);
  zip.file('[Content_Types].xml', types);
  return zip.generate({ type: 'nodebuffer', compression: 'DEFLATE' }) as Buffer;
}

function inlinePicture(i: number): string {
  return `<w:p><w:r><w:drawing><wp:inline><wp:extent cx="1800000" cy="1800000"/><wp:docPr id="${i + 1}" name="p${i}"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">` +
    `<pic:pic><pic:nvPicPr><pic:cNvPr id="${i + 1}" name="p${i}.png"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:embed="rIdImg${i}"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>` +
    `<pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="1800000" cy="1800000"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>`;
}

/** A solid RGB PNG, deflated a row at a time (the raw image is never held whole). */
async function solidPng(width: number, height: number, rgb: number[]): Promise<Buffer> {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  const row = Buffer.alloc(1 + width * 3); // filter byte 0, then the pixels
  for (let x = 0; x < width; x++) row.set(rgb, 1 + x * 3);
  const deflate = createDeflate({ level: 9 });
  const parts: Buffer[] = [];
  deflate.on('data', (part: Buffer) => parts.push(part));
  const ended = new Promise((resolve) => deflate.on('end', resolve));
  for (let y = 0; y < height; y++) if (!deflate.write(row)) await new Promise((resolve) => deflate.once('drain', resolve));
  deflate.end();
  await ended;
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, pngChunk('IHDR', header), pngChunk('IDAT', Buffer.concat(parts)), pngChunk('IEND', Buffer.alloc(0))]);
}
