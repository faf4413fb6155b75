import type Docxtemplater from 'docxtemplater';

const ENDNOTES_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.endnotes+xml';

interface FileTypeProbe {
  doc: { invertedContentTypes?: Record<string, string[]>; targets: string[] };
}

/**
 * docxtemplater templates the body, headers, footers, footnotes and comments but not the
 * endnotes part. This module adds it to the templated parts (`doc.targets`) while the file
 * type is detected, so `{tags}` and loops work in endnotes like everywhere else.
 */
export function createEndnotesModule(): Docxtemplater.DXT.Module {
  return {
    name: 'DocprocEndnotesModule',
    getFileType({ doc }: FileTypeProbe) {
      for (const part of doc.invertedContentTypes?.[ENDNOTES_CONTENT_TYPE] ?? []) {
        if (!doc.targets.includes(part)) doc.targets.push(part);
      }
      return undefined;
    },
  };
}
