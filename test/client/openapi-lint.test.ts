import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** redocly lint with the committed redocly.yaml (what `npm run openapi:lint` runs). */
const root = path.resolve(import.meta.dirname, '../..');

function lint(file: string) {
  const result = spawnSync(path.join(root, 'node_modules/.bin/redocly'), ['lint', file, '--config', path.join(root, 'redocly.yaml'), '--format', 'stylish'], {
    cwd: root,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, output: `${result.stdout}\n${result.stderr}` };
}

type Doc = { paths: Record<string, Record<string, { description?: string; requestBody?: { content: Record<string, { example?: unknown }> }; responses: Record<string, { content?: Record<string, unknown> }> }>> };

describe('OpenAPI lint (redocly.yaml)', () => {
  it('openapi/openapi.json passes with no errors and no warnings', () => {
    const { status, output } = lint(path.join(root, 'openapi/openapi.json'));
    expect(status, output).toBe(0);
    expect(output).toMatch(/Your API description is valid/);
    expect(output).not.toMatch(/You have \d+ warnings?/);
  });

  it('fails a document that breaks the project rules (no JSON example, JSON error body, no description)', () => {
    const doc = JSON.parse(readFileSync(path.join(root, 'openapi/openapi.json'), 'utf8')) as Doc;
    delete doc.paths['/v1/annotate'].post.requestBody!.content['application/json'].example;
    const badRequest = doc.paths['/v1/convert'].post.responses['400'];
    badRequest.content = { 'application/json': badRequest.content!['application/problem+json'] };
    delete doc.paths['/v1/sign'].post.description;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'docproc-lint-'));
    try {
      const file = path.join(dir, 'broken.json');
      writeFileSync(file, JSON.stringify(doc));
      const { status, output } = lint(file);
      expect(status).not.toBe(0);
      expect(output).toContain('rule/json-request-body-has-example');
      expect(output).toContain('rule/client-errors-are-problems');
      expect(output).toContain('operation-description');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
