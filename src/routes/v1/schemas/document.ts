import { Type } from '@sinclair/typebox';

/** What docproc answers documents with (`{base64, contentType}`) is accepted back: the type is detected from the bytes. */
export const DocumentContentType = Type.Optional(
  Type.String({ maxLength: 255, description: 'Media type of the document, as docproc returns it; the service detects the type from the bytes.' }),
);
