import { PDFDocument, StandardFonts } from 'pdf-lib';

/**
 * Text pages written by pdf-lib without object streams (a classic xref table): `pages` pages of
 * `linesPerPage` lines (50 × 940 is issue 27's 1 MB file; 1 160 × 30 about the same size spread over
 * many small objects). One font resource per page, as real documents have: passing `font` to every
 * drawText would add a new resource name per call (17 000 of them), which no real PDF looks like.
 */
export async function textPdf(pages: number, linesPerPage: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let p = 0; p < pages; p++) {
    const page = doc.addPage([595, 842]);
    page.setFont(font);
    page.setFontSize(8);
    for (let l = 0; l < linesPerPage; l++) {
      page.drawText(`Page ${p + 1} line ${l + 1}: ${Math.random().toString(36).repeat(4)}`, { x: 30, y: 800 - (l % 70) * 11 });
    }
  }
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}
