import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import PizZip from 'pizzip';
import { chromium, type BrowserContext, type Locator, type Page, type Response } from 'playwright-core';
import { issueTestKey } from '../support/api-key.js';
import { pdfText } from '../support/pdf-text.js';
import { buildTestApp, type TestApp } from '../support/test-app.js';
import { CORPUS_DIR } from '../support/corpus.js';

/**
 * Swagger UI at /docs, driven in Debian's Chromium (never a downloaded browser): authorise with
 * a key, then "Try it out" on convert (file picker), annotate (JSON body edited in the textarea)
 * and sign (multipart form pre-filled from the examples, PDF picked), and check both what the
 * page shows and the bytes the server sent. Screenshots land in test-artifacts/ (gitignored).
 */
const CHROMIUM = '/usr/bin/chromium';
const corpus = `${CORPUS_DIR}`;
const artifacts = path.resolve(import.meta.dirname, '../../test-artifacts');
const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

let t: TestApp;
let baseUrl: string;
let key: string;
let profile: string;
let browser: BrowserContext;
let page: Page;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (scripts/setup.sh test installs it)`);
  mkdirSync(artifacts, { recursive: true });
  t = await buildTestApp({ REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: 'swagger-ui-pepper-0123', RATE_LIMIT_MAX: '1000', OFFICE_ENABLED: 'true', OFFICE_POOL_SIZE: '1' });
  key = await issueTestKey(t.app);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  profile = mkdtempSync(path.join(os.tmpdir(), 'docproc-chromium-'));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    viewport: { width: 1280, height: 1400 },
  });
  page = browser.pages()[0] ?? (await browser.newPage());
});

afterAll(async () => {
  await browser?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  await t?.app.close();
});

async function openTryItOut(id: string): Promise<Locator> {
  const op = page.locator(`#${id}`);
  await op.locator('.opblock-summary').click();
  await op.locator('button.try-out__btn').click();
  return op;
}

/** Clicks Execute; returns the server's answer (status, headers) once Swagger UI shows it. */
async function execute(op: Locator, urlPart: string): Promise<Response> {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.url().includes(urlPart) && r.request().method() === 'POST', { timeout: 90_000 }),
    op.locator('button.execute').click(),
  ]);
  await op.locator('.live-responses-table tr.response .response-col_status').first().waitFor({ timeout: 30_000 });
  return response;
}

/** Clicks Swagger UI's "Download file" link and reads the file the person would get. */
async function download(op: Locator): Promise<{ filename: string; data: Buffer }> {
  const link = op.locator('.live-responses-table a[download]').first();
  await link.waitFor({ timeout: 30_000 });
  const [file] = await Promise.all([page.waitForEvent('download'), link.click()]);
  const chunks: Buffer[] = [];
  for await (const chunk of await file.createReadStream()) chunks.push(chunk as Buffer);
  await file.delete();
  return { filename: file.suggestedFilename(), data: Buffer.concat(chunks) };
}

/** Screenshot of the operation from its header down to the live response (not the response docs below). */
async function snapshot(op: Locator, name: string) {
  // Page coordinates (a full-page clip is relative to the page, boundingBox to the viewport).
  const box = (l: Locator) => l.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const view = globalThis as unknown as { scrollX: number; scrollY: number }; // the browser window (no DOM lib here)
    return { x: r.x + view.scrollX, y: r.y + view.scrollY, width: r.width, bottom: r.bottom + view.scrollY };
  });
  const top = await box(op);
  const live = await box(op.locator('.live-responses-table'));
  await page.screenshot({ path: path.join(artifacts, name), fullPage: true, clip: { x: top.x, y: top.y, width: top.width, height: live.bottom - top.y + 10 } });
}

/** The row of a multipart form part in the request body table. */
const partRow = (op: Locator, name: string) => op.locator('.opblock-section-request-body tr', { has: page.locator('.parameter__name', { hasText: new RegExp(`^\\s*${name}\\b`) }) });

const liveStatus = (op: Locator) => op.locator('.live-responses-table tr.response .response-col_status').first().innerText();

describe('Swagger UI at /docs in Chromium', () => {
  it('loads every operation and takes the API key through Authorize', async () => {
    await page.goto(`${baseUrl}/docs`);
    await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
    const paths = await page.locator('.opblock-summary-path').allInnerTexts();
    for (const p of ['/v1/health', '/v1/health/ready', '/v1/auth/register', '/v1/auth/verify', '/v1/convert', '/v1/annotate', '/v1/sign', '/v1/verify/key', '/v1/verify', '/metrics']) {
      expect(paths.map((x) => x.replace(/\u200b/g, ''))).toContain(p);
    }
    await page.locator('button.authorize').first().click();
    // Two schemes: the API key (bearerAuth) and the operators' metrics token; the key goes to the first.
    const apiKey = page.locator('.modal-ux .auth-container', { hasText: 'bearerAuth' });
    // Each field says which key it takes (issue 25: two bearer fields with no hint).
    expect(await apiKey.innerText()).toContain('your API key');
    expect(await page.locator('.modal-ux .auth-container', { hasText: 'metricsToken' }).innerText()).toContain('Only for GET /metrics');
    await apiKey.locator('input').fill(key);
    await apiKey.locator('button.authorize').click();
    await expect.poll(() => page.locator('.modal-ux button', { hasText: 'Logout' }).count()).toBe(1);
    await page.locator('.modal-ux button.close-modal').click();
  });

  it('convert: picks a DOCX in the file input and gets a PDF back', async () => {
    const op = await openTryItOut('operations-Convert-convert');
    // The description's HTML tag names are code, not markup that strikes the rest through.
    expect(await op.locator('.opblock-description-wrapper').first().innerText()).toContain('<ins>');
    expect(await op.locator('.opblock-description-wrapper del').count()).toBe(0);
    const fileInputs = op.locator('input[type=file]');
    expect(await fileInputs.count()).toBe(3); // file, reference and the first of the files (images a Markdown/HTML document refers to)
    await fileInputs.first().setInputFiles(path.join(corpus, 'docx/pandoc-tables.docx'));
    const response = await execute(op, '/v1/convert');
    expect(response.status(), await response.text()).toBe(200);
    expect(response.headers()['content-type']).toBe('application/pdf');
    expect(await liveStatus(op)).toContain('200');
    expect(await op.locator('.live-responses-table').innerText()).toMatch(/content-type: application\/pdf/i);
    const file = await download(op);
    expect(file.filename).toBe('pandoc-tables.pdf');
    expect(file.data.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdfText(file.data)).toContain('Lebron James');
    // The form's untouched PDF options ask for nothing (Swagger UI sends every text field it shows).
    expect(file.data.toString('latin1')).not.toMatch(/pdfaid:part|\/Rotate 90/);
    await snapshot(op, 'swagger-ui-convert.png');
  });

  it('annotate: the JSON example body is pre-filled; edited to a corpus template it fills the tags', async () => {
    const op = await openTryItOut('operations-Annotate-annotate');
    const textarea = op.locator('textarea.body-param__text');
    const prefilled = JSON.parse(await textarea.inputValue()) as { document: { base64: string }; fields: unknown[] };
    expect(prefilled.document.base64.length).toBeGreaterThan(100);
    expect(prefilled.fields.length).toBeGreaterThan(0);
    const template = readFileSync(path.join(corpus, 'templates/docxtemplater-tag-example.docx')).toString('base64');
    await textarea.fill(
      JSON.stringify({
        document: { base64: template },
        fields: [
          { id: 'first_name', type: 'text', value: 'Ada' },
          { id: 'last_name', type: 'text', value: 'Lovelace' },
          { id: 'phone', type: 'text', value: '+44 20 7946 0000' },
          { id: 'description', type: 'text', value: 'Analytical Engine programmer' },
        ],
      }),
    );
    const response = await execute(op, '/v1/annotate');
    expect(response.status(), await response.text()).toBe(200);
    // Swagger UI asks for the first 200 media type (the DOCX) in Accept, so the file comes back.
    expect(response.headers()['content-type']).toBe(DOCX_TYPE);
    expect(await liveStatus(op)).toContain('200');
    const file = await download(op);
    const docx = new PizZip(file.data);
    expect(docx.file('word/document.xml')!.asText().replace(/<[^>]+>/g, '')).toMatch(/Lovelace[\s\S]*Ada/);
    await snapshot(op, 'swagger-ui-annotate.png');
  });

  it('sign: the multipart form offers file pickers (file, p12, appearanceImage) and its pre-filled parts sign a picked PDF', async () => {
    const op = await openTryItOut('operations-Sign-sign');
    await op.locator('.opblock-section-request-body select').first().selectOption('multipart/form-data');
    const fileInputs = op.locator('input[type=file]');
    await expect.poll(() => fileInputs.count()).toBe(3);
    await partRow(op, 'file').locator('input[type=file]').setInputFiles(path.join(corpus, 'pdf-unsigned/signpdf-w3dummy.pdf'));
    expect(await partRow(op, 'p12').locator('input[type=file]').count()).toBe(1);
    expect(await partRow(op, 'appearanceImage').locator('input[type=file]').count()).toBe(1);
    expect(await partRow(op, 'signer').locator('input').inputValue()).toContain('"email"');
    const response = await execute(op, '/v1/sign');
    expect(response.status(), `${await op.locator('.live-responses-table').innerText()}\n${response.request().postData()?.slice(0, 3000)}`).toBe(200);
    expect(response.headers()['content-type']).toBe('application/pdf');
    const pdf = (await download(op)).data.toString('latin1');
    expect(pdf.startsWith('%PDF-')).toBe(true);
    expect(pdf).toContain('/ByteRange');
    expect(pdf).toContain('I agree to the terms'); // the pre-filled reason part
    expect(await liveStatus(op)).toContain('200');
    await snapshot(op, 'swagger-ui-sign.png');
  });
});
