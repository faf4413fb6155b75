import PizZip from 'pizzip';
import { buildDocx, para } from '../annotate/docx-builder.js';
import { multipartBody } from '../annotate/multipart.js';
import { largeImagesDocx } from '../office/large-images.js';

type Multipart = ReturnType<typeof multipartBody>;

/**
 * The worst request of each kind one ordinary key can send (issue 26), as bodies ready to post:
 * `office` takes LibreOffice past its memory (convert), `json` is a 38 MB annotate JSON body, `bomb`
 * a 198 KB zip that inflates to 199 MB (convert), `warnings` a template whose 60 empty 5 000-character
 * tags fill the warnings (annotate).
 */
export async function worstRequestBodies(): Promise<{ office: Multipart; json: Buffer; bomb: Multipart; warnings: Multipart }> {
  const office = multipartBody([{ name: 'file', value: await largeImagesDocx(4, 10_000), filename: 'images.docx' }]);
  const bombZip = new PizZip();
  bombZip.file('[Content_Types].xml', '<Types/>');
  bombZip.file('word/document.xml', Buffer.alloc(199 * 1024 * 1024, 0x20));
  const bomb = multipartBody([{ name: 'file', value: bombZip.generate({ type: 'nodebuffer', compression: 'DEFLATE' }) as Buffer, filename: 'bomb.docx' }]);
  const json = Buffer.from(JSON.stringify({ document: { base64: buildDocx({ body: para('{name}') }).toString('base64') }, fields: [], data: { name: 'x', pad: 'A'.repeat(38_000_000) } }));
  const warnings = multipartBody([{ name: 'file', value: buildDocx({ body: Array.from({ length: 60 }, (_, i) => para(`{${String(i).padStart(2, '0')}${'x'.repeat(5000)}}`)).join('') }), filename: 'w.docx' }, { name: 'fields', value: '[]' }]);
  return { office, json, bomb, warnings };
}
