import { writeZip } from '../../../src/documents/ooxml/zip/write.js';

/**
 * A minimal OpenDocument package LibreOffice opens: the stored `mimetype` first, a manifest naming
 * the document's media type, and `contentXml` as content.xml.
 */
export function buildOdfPackage(mediaType: string, contentXml: string): Buffer {
  const manifest =
    '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">' +
    `<manifest:file-entry manifest:full-path="/" manifest:media-type="${mediaType}"/>` +
    '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>';
  return writeZip([
    { name: 'mimetype', data: Buffer.from(mediaType), store: true },
    { name: 'META-INF/manifest.xml', data: Buffer.from(manifest) },
    { name: 'content.xml', data: Buffer.from(contentXml) },
  ]);
}
