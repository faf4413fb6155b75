import { readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import { it } from 'vitest';
import { signPdf } from '../../../src/documents/sign/sign-pdf.js';
import { createTestPki } from '../../integration/sign/pki.js';
it('chain', async () => {
  const pki = createTestPki();
  const req = (name: string, extra = {}) => ({ signer: { name, email: 'a@example.com' }, auditTrail: [{ type: 'submit', timestamp: '2025-03-01T09:01:00Z' }], ...extra }) as any;
  const input = readFileSync('/work/shared/corpus/pdf-unsigned/signpdf-w3dummy.pdf');
  const a = await signPdf(input, req('First'), pki.rsa);
  const b = await signPdf(a, req('Second'), pki.ec);
  const c = await signPdf(b, req('Third'), pki.rsa);
  writeFileSync('/tmp/pdfscratch/c1.pdf', a); writeFileSync('/tmp/pdfscratch/c2.pdf', b); writeFileSync('/tmp/pdfscratch/c3.pdf', c);
  const one = await signPdf(input, req('First', { certificate: { enabled: false } }), pki.rsa);
  writeFileSync('/tmp/pdfscratch/n1.pdf', one); writeFileSync('/tmp/pdfscratch/n2.pdf', await signPdf(one, req('Second', { certificate: { enabled: false } }), pki.ec));
  copyFileSync(`${pki.dir}/root.pem`, '/tmp/pdfscratch/root.pem');
  pki.cleanup();
});
