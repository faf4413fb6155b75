import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../../src/project-root.js';
import { importGraph } from '../../support/import-graph.js';

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
