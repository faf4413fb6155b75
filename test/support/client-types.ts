import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';

const BLOB = ts.factory.createTypeReferenceNode(ts.factory.createIdentifier('Blob'));

/**
 * TypeScript types for openapi-fetch from an OpenAPI document, as a client project generates
 * them: `format: binary` (file parts, binary answers) becomes Blob, the documented
 * openapi-typescript transform for file uploads.
 */
export async function generateClientTypes(openapiFile: string, outFile: string): Promise<void> {
  const ast = await openapiTS(pathToFileURL(openapiFile), {
    transform(schema) {
      return 'format' in schema && schema.format === 'binary' ? BLOB : undefined;
    },
  });
  writeFileSync(outFile, astToString(ast));
}
