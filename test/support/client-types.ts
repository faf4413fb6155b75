import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
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

const projectRoot = path.resolve(import.meta.dirname, '../..');
const bin = (name: string) => path.join(projectRoot, 'node_modules/.bin', name);

/** Writes `program` as client.ts next to schema.d.ts in `dir` and type-checks it with strict tsc. */
export function compileClient(dir: string, program: string, lib: string[] = ['ES2023']): void {
  writeFileSync(path.join(dir, 'client.ts'), program);
  writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}');
  const compilerOptions = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib, strict: true, noEmit: true, skipLibCheck: true, types: ['node'] };
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['client.ts', 'schema.d.ts'] }));
  try {
    execFileSync(bin('tsc'), ['-p', path.join(dir, 'tsconfig.json')], { stdio: 'pipe' });
  } catch (err) {
    throw new Error(`the generated client does not compile:\n${(err as { stdout?: Buffer }).stdout?.toString()}`);
  }
}

/** Runs dir/client.ts with tsx, feeding `stdin` once it resolves; the last stdout line is its JSON result. */
export async function runClient(dir: string, args: string[], stdin: Promise<string>): Promise<{ exit: number | null; result: unknown; stderr: string }> {
  const child = spawn(bin('tsx'), [path.join(dir, 'client.ts'), ...args], { cwd: projectRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let stderr = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.end(`${await stdin}\n`);
  const exit = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const last = out.trim().split('\n').pop() ?? '';
  return { exit, stderr, result: exit === 0 ? JSON.parse(last) : undefined };
}
