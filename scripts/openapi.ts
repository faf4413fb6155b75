/**
 * `write`: regenerate openapi/openapi.json from the routes. `check`: exit 1 when the
 * committed document differs from what the routes produce (CI and the before-stop hook).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateOpenApiDocument } from '../test/support/openapi-document.js';

const target = fileURLToPath(new URL('../openapi/openapi.json', import.meta.url));
const mode = process.argv[2];
const generated = await generateOpenApiDocument();

if (mode === 'write') {
  writeFileSync(target, generated);
  console.log(`wrote ${target}`);
} else if (mode === 'check') {
  let committed = '';
  try {
    committed = readFileSync(target, 'utf8');
  } catch {
    /* missing counts as different */
  }
  if (committed !== generated) {
    console.error('openapi/openapi.json is out of date: run `npm run openapi:generate` and commit it.');
    process.exit(1);
  }
  console.log('openapi/openapi.json is up to date');
} else {
  console.error('usage: openapi.ts write|check');
  process.exit(2);
}
