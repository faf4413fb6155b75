import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../../src/project-root.js';
import { importCircles, importGraph } from '../../support/import-graph.js';

const SRC = path.join(projectRoot, 'src');
const graph = importGraph(SRC);

/** Folders below the HTTP layer: they know nothing of HTTP (issue 23 step 4). */
const ENGINES = ['documents/', 'office/', 'inputs/', 'compute/', 'errors/', 'store/', 'temp/', 'accounts/'];
const HTTP_FILES = /^(http\/|routes\/|app\.ts$|server\.ts$|services\.ts$)/;
const HTTP_PACKAGES = /^(fastify|@fastify\/|@sinclair\/typebox|find-my-way|light-my-request)(\/|$)/;

describe('import boundaries', () => {
  it('reads the whole of src/', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('http/error-handler.ts')?.files).toContain('http/error-status.ts');
  });

  it('engines import nothing from http/, routes/, the app, or Fastify', () => {
    const crossings = [...graph]
      .filter(([file]) => ENGINES.some((folder) => file.startsWith(folder)))
      .flatMap(([file, { files, packages }]) => [
        ...files.filter((target) => HTTP_FILES.test(target)).map((target) => `${file} → ${target}`),
        ...packages.filter((name) => HTTP_PACKAGES.test(name)).map((name) => `${file} → ${name}`),
      ]);
    expect(crossings).toEqual([]);
  });
});

describe('the operations layer (issue 23 step 3)', () => {
  const importers = (target: RegExp) => [...graph].filter(([file, { files }]) => !target.test(file) && files.some((f) => target.test(f))).map(([file]) => file).sort();

  it('routes reach workers, the worker pool and the office pool only through src/operations/', () => {
    const reaches = [...graph]
      .filter(([file]) => file.startsWith('routes/'))
      .flatMap(([file, { files }]) => files.filter((f) => /^(\.\.\/workers\/|compute\/|office\/)/.test(f)).map((f) => `${file} → ${f}`));
    expect(reaches).toEqual([]);
  });

  it('operations are called by the routes (and built in services.ts), by nothing else', () => {
    expect(importers(/^operations\//).filter((file) => !file.startsWith('routes/') && file !== 'services.ts')).toEqual([]);
  });

  it('operations know nothing of HTTP', () => {
    const crossings = [...graph]
      .filter(([file]) => file.startsWith('operations/'))
      .flatMap(([file, { files, packages }]) => [...files.filter((f) => HTTP_FILES.test(f)), ...packages.filter((p) => HTTP_PACKAGES.test(p))].map((t) => `${file} → ${t}`));
    expect(crossings).toEqual([]);
  });

  it('route handlers call one operation: no worker task, renderer or signing setup named in routes/', () => {
    const named = [...graph.keys()]
      .filter((file) => file.startsWith('routes/'))
      .flatMap((file) => {
        const text = readFileSync(path.join(SRC, file), 'utf8');
        return [...text.matchAll(/services\.(workers|renderPdf|assertCanRenderPdf|signing)\b|\.run(<[^>]*>)?\(\s*'/g)].map((m) => `${file}: ${m[0]}`);
      });
    expect(named).toEqual([]);
  });
});

describe('import circles', () => {
  it('src/ has none (issue 23 step 6: services ↔ routes/v1/health and the schema ↔ examples files had one each)', () => {
    expect(importCircles(graph)).toEqual([]);
  });

  it('the circle finder finds a circle when there is one', () => {
    const circular = new Map([
      ['a.ts', { files: ['b.ts'], packages: [] }],
      ['b.ts', { files: ['c.ts'], packages: [] }],
      ['c.ts', { files: ['a.ts'], packages: [] }],
      ['d.ts', { files: ['a.ts', 'd.ts'], packages: [] }],
    ]);
    expect(importCircles(circular)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['d.ts']]);
  });
});
