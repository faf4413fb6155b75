import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** One source file's imports: the src/ files it reaches and the packages it names. */
export interface ModuleImports {
  files: string[];
  packages: string[];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.ts$/.test(name) && !name.endsWith('.d.ts') ? [full] : [];
  });
}

function resolveRelative(from: string, specifier: string): string | undefined {
  const base = path.resolve(path.dirname(from), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), `${base}.ts`, path.join(base, 'index.ts')];
  return candidates.find((candidate) => {
    try {
      return statSync(candidate).isFile();
    } catch {
      return false;
    }
  });
}

/**
 * The import graph of every .ts file under `root` (static imports, re-exports and dynamic
 * `import('…')` with a literal), keyed by path relative to `root`, read with TypeScript's own
 * pre-processor so comments and strings never count as imports.
 */
export function importGraph(root: string): Map<string, ModuleImports> {
  const graph = new Map<string, ModuleImports>();
  for (const file of sourceFiles(root)) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const files: string[] = [];
    const packages: string[] = [];
    for (const { fileName: specifier } of info.importedFiles) {
      if (specifier.startsWith('.')) {
        const target = resolveRelative(file, specifier);
        if (!target) throw new Error(`${path.relative(root, file)}: cannot resolve ${specifier}`);
        files.push(path.relative(root, target));
      } else {
        packages.push(specifier);
      }
    }
    graph.set(path.relative(root, file), { files, packages });
  }
  return graph;
}

/** Every import circle, each listed once from its smallest file name (Tarjan's strongly connected components). */
export function importCircles(graph: Map<string, ModuleImports>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string) => {
    index.set(file, counter);
    low.set(file, counter);
    counter++;
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file)?.files ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    const selfLoop = graph.get(file)?.files.includes(file);
    if (component.length > 1 || selfLoop) circles.push(component.sort());
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) visit(file);
  return circles;
}
