import type { FastifyInstance } from 'fastify';
import { generateApiKey, hashApiKey } from '../../src/accounts/api-keys.js';

/** A valid key stored the way /v1/auth/verify stores it (the mail flow itself is tested in foundation/). */
export async function issueTestKey(app: FastifyInstance, email = 'tester@example.com'): Promise<string> {
  // On a loaded machine the app may start before its Redis connection is up (it waits 3 s).
  await app.services.store.connected(30_000);
  const key = generateApiKey();
  await app.services.store.putApiKey(hashApiKey(key, app.services.config.pepper), { email, createdAt: new Date().toISOString() });
  return key;
}

/** A multipart body as a browser or a generated client sends it. */
export async function multipart(parts: Record<string, { data: Buffer; filename: string } | string>): Promise<{ payload: Buffer; contentType: string }> {
  const form = new FormData();
  for (const [name, part] of Object.entries(parts)) {
    if (typeof part === 'string') form.append(name, part);
    else form.append(name, new Blob([part.data]), part.filename);
  }
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  return { payload: Buffer.from(await request.arrayBuffer()), contentType: request.headers.get('content-type')! };
}
