import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../../src/project-root.js';
import { importGraph } from '../../support/import-graph.js';

/**
 * Remote inputs are fetched in one place (issue 23): src/inputs/remote-inputs.ts decides, operations
 * call it ("fetch images then fill", "fetch images then render markup"), and the engines under
 * src/documents receive bytes. These checks fail if an engine fetches on its own again.
 */
const SRC = path.join(projectRoot, 'src');
const graph = importGraph(SRC);
const workers = importGraph(path.join(projectRoot, 'workers'));

const NETWORK_PACKAGES = /^(node:)?(http|https|http2|net|tls|dns|dns\/promises|dgram|undici)$/;
const SAFE_FETCH = 'inputs/safe-fetch.ts';
const REMOTE_INPUTS = 'inputs/remote-inputs.ts';
/**
 * The service's own outbound requests in the PKI layer (a TSA's time-stamp, OCSP/CRL revocation data),
 * under their own budget (README "Outbound budget"): not caller-given inputs, and the only engine files
 * that reach safe-fetch.
 */
const PKI_OUTBOUND = ['documents/pki/revocation/fetcher.ts', 'documents/pki/tsa-client.ts'];

const importersOf = (target: string) => [...graph].filter(([, { files }]) => files.includes(target)).map(([file]) => file).sort();
/**
 * A call of the global fetch (`await fetch(`, `= fetch(`, `globalThis.fetch`…), not a method such as
 * source.fetch(…) nor an interface's `fetch(urls): …` declaration; comments stripped roughly.
 */
const GLOBAL_FETCH = /(?:\bawait|\breturn|=>|[=(,?:!&|])\s*fetch\s*\(|\bglobalThis\.fetch\b/;
const callsGlobalFetch = (file: string) =>
  GLOBAL_FETCH.test(readFileSync(path.join(SRC, file), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, ''));

/** Every src/ file `entry` reaches through its imports (itself included). */
function reachable(entry: string): Set<string> {
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    stack.push(...(graph.get(file)?.files ?? []));
  }
  return seen;
}

describe('remote inputs are fetched in one place (src/inputs/remote-inputs.ts)', () => {
  it('reads src/ and workers/', () => {
    expect(graph.get(REMOTE_INPUTS)?.files).toContain(SAFE_FETCH);
    expect(workers.get('markup.ts')?.files.length).toBeGreaterThan(0);
  });

  it('no engine under src/documents imports a network module, safe-fetch or the policy, or calls the global fetch (except the PKI outbound clients)', () => {
    const found = [...graph]
      .filter(([file]) => file.startsWith('documents/') && !PKI_OUTBOUND.includes(file))
      .flatMap(([file, { files, packages }]) => [
        ...packages.filter((p) => NETWORK_PACKAGES.test(p)).map((p) => `${file} → ${p}`),
        ...files.filter((f) => f === SAFE_FETCH || f === REMOTE_INPUTS).map((f) => `${file} → ${f}`),
        ...(callsGlobalFetch(file) ? [`${file} → fetch()`] : []),
      ]);
    expect(found).toEqual([]);
  });

  it('the Markdown, HTML and annotate engines reach no network code even indirectly', () => {
    for (const entry of ['documents/markdown/index.ts', 'documents/html/index.ts', 'documents/annotate/index.ts']) {
      const files = [...reachable(entry)];
      expect(files.length, entry).toBeGreaterThan(3);
      const network = files.filter((f) => f === SAFE_FETCH || f === REMOTE_INPUTS || PKI_OUTBOUND.includes(f) || graph.get(f)!.packages.some((p) => NETWORK_PACKAGES.test(p)));
      expect(network, entry).toEqual([]);
    }
  });

  it('the worker tasks for markup and annotate import no network module', () => {
    for (const task of ['markup.ts', 'annotate.ts']) {
      expect(workers.get(task)!.packages.filter((p) => NETWORK_PACKAGES.test(p)), task).toEqual([]);
      expect(workers.get(task)!.files.filter((f) => /safe-fetch|remote-inputs/.test(f)), task).toEqual([]);
    }
  });

  it('routes fetch nothing: no route imports the policy or safe-fetch, or loads a document source (operations do)', () => {
    const found = [...graph]
      .filter(([file]) => file.startsWith('routes/'))
      .flatMap(([file, { files }]) => [
        ...files.filter((f) => f === SAFE_FETCH || f === REMOTE_INPUTS).map((f) => `${file} → ${f}`),
        ...(/\bloadDocumentSource\b/.test(readFileSync(path.join(SRC, file), 'utf8')) ? [`${file} → loadDocumentSource`] : []),
      ]);
    expect(found).toEqual([]);
  });

  it('safe-fetch is called by the policy and the PKI outbound clients only; the policy by the operations and document sources', () => {
    expect(importersOf(SAFE_FETCH)).toEqual([REMOTE_INPUTS, ...PKI_OUTBOUND].sort());
    expect(importersOf(REMOTE_INPUTS)).toEqual(['inputs/document-source.ts', 'operations/deps.ts']);
    // Both operations that take images by URL build their fetches from it.
    for (const operation of ['operations/annotate.ts', 'operations/convert.ts']) {
      const text = readFileSync(path.join(SRC, operation), 'utf8');
      expect(text, operation).toMatch(/remoteInputsOf\(deps\.config\)/);
      expect(text, operation).toMatch(/\.imageRequest\(\)/);
    }
  });
});
