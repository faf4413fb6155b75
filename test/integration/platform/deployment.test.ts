import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../support/global-setup.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';
import { issueTestKey } from '../../support/api-key.js';
import { startNginx, type Nginx } from './nginx.js';

/**
 * The deployment files as shipped (issue 25 item 7): the Kubernetes kustomization renders and every
 * object is valid against the Kubernetes schemas (kubernetes-models: its validators for types,
 * required fields and enums; its TypeScript types, through tsc's excess-property check, for unknown
 * fields); the objects agree with each other and with the service (ports, labels, secrets, limits);
 * compose, Kubernetes and the README say the same about what the jail needs from the runtime; and
 * the shipped nginx config keeps a caller's well-formed X-Request-Id and lets the service answer an
 * oversized body itself.
 */
const root = path.resolve(import.meta.dirname, '../../..');
const k8sDir = path.join(root, 'deploy/kubernetes');
type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: any; data?: Record<string, string>; stringData?: Record<string, string> };

/** `kubectl kustomize` for what docproc's kustomization uses: its resources, in order. Any other field fails. */
function renderKustomization(dir: string): K8sObject[] {
  const kustomization = parseYaml(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8')) as Record<string, unknown>;
  const unsupported = Object.keys(kustomization).filter((key) => !['apiVersion', 'kind', 'resources'].includes(key));
  if (unsupported.length) throw new Error(`kustomization.yaml uses ${unsupported.join(', ')}, which this renderer does not apply: extend it`);
  expect(kustomization.kind).toBe('Kustomization');
  return (kustomization.resources as string[]).flatMap((file) =>
    parseAllDocuments(readFileSync(path.join(dir, file), 'utf8')).map((doc) => {
      if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0]!.message}`);
      return doc.toJS() as K8sObject;
    }).filter(Boolean));
}

/** kubernetes-models module and TypeScript interface for an object's apiVersion and kind. */
function modelOf(object: K8sObject): { module: string; type: string } {
  const [group, version] = object.apiVersion.includes('/') ? object.apiVersion.split('/') : ['', object.apiVersion];
  return { module: `kubernetes-models/${group || ''}${group ? '/' : ''}${version}/${object.kind}`, type: `I${object.kind}` };
}

const rendered = renderKustomization(k8sDir);
const named = (kind: string, name: string) => rendered.find((o) => o.kind === kind && o.metadata.name === name)!;
const secretExample = parseAllDocuments(readFileSync(path.join(k8sDir, 'secret.example.yaml'), 'utf8')).map((d) => d.toJS() as K8sObject);
const deployment = named('Deployment', 'docproc');
const container = deployment.spec.template.spec.containers[0];
const compose = parseYaml(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8')) as { services: Record<string, { security_opt?: string[]; environment?: Record<string, string> }> };

describe('Kubernetes manifests', () => {
  it('render (kustomization resources) to the objects a deployment needs', () => {
    expect(rendered.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ConfigMap/docproc-config', 'Deployment/docproc', 'HorizontalPodAutoscaler/docproc', 'Ingress/docproc',
      'NetworkPolicy/docproc', 'NetworkPolicy/docproc-redis', 'PodDisruptionBudget/docproc', 'Service/docproc',
      'Service/docproc-redis', 'StatefulSet/docproc-redis',
    ]);
  });

  it('every object (and the Secret example) passes the Kubernetes schema validators of kubernetes-models', async () => {
    for (const object of [...rendered, ...secretExample]) {
      const { module } = modelOf(object);
      const Model = (await import(module))[object.kind] as new (data: unknown) => { validate(): void };
      expect(() => new Model(object).validate(), `${object.kind}/${object.metadata.name}`).not.toThrow();
    }
  });

  it('no object has a field the Kubernetes types do not know (tsc excess-property check)', () => {
    const dir = mkdtempSync(path.join(root, 'test/integration/platform/.k8s-types-'));
    try {
      const objects = [...rendered, ...secretExample];
      const imports = [...new Set(objects.map((o) => { const m = modelOf(o); return `import type { ${m.type} as ${o.kind}Type } from '${m.module}';`; }))];
      const body = objects.map((o, i) => `export const object${i}: ${o.kind}Type = ${JSON.stringify(o, null, 2)};`);
      writeFileSync(path.join(dir, 'objects.ts'), [...imports, ...body].join('\n'));
      const tsconfig = { compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: [] }, include: ['objects.ts'] };
      writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
      writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}');
      try {
        execFileSync(path.join(root, 'node_modules/.bin/tsc'), ['-p', path.join(dir, 'tsconfig.json')], { stdio: 'pipe' });
      } catch (err) {
        throw new Error(`the manifests have fields Kubernetes does not define:\n${(err as { stdout?: Buffer }).stdout?.toString()}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('the docproc NetworkPolicy selects the Deployment, and its egress reaches the Redis Service port and nothing unnamed', () => {
    const policy = named('NetworkPolicy', 'docproc');
    expect(policy.spec.podSelector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    const redisService = named('Service', 'docproc-redis');
    const redisRule = policy.spec.egress.find((rule: any) => rule.to.some((peer: any) => peer.podSelector?.matchLabels?.['app.kubernetes.io/name'] === 'docproc-redis'));
    expect(redisRule.ports).toEqual([{ protocol: 'TCP', port: redisService.spec.ports[0].port }]);
    expect(named('StatefulSet', 'docproc-redis').spec.template.metadata.labels).toMatchObject(redisService.spec.selector);
    // Every egress rule names its peers and ports: no rule opens everything.
    for (const rule of policy.spec.egress) {
      expect(rule.to?.length).toBeGreaterThan(0);
      expect(rule.ports?.length).toBeGreaterThan(0);
      for (const peer of rule.to) if (peer.ipBlock) expect(peer.ipBlock.cidr).not.toBe('0.0.0.0/0');
    }
    const redisPolicy = named('NetworkPolicy', 'docproc-redis');
    expect(redisPolicy.spec.ingress[0].from[0].podSelector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    expect(redisPolicy.spec.egress).toEqual([]);
  });

  it('secrets: REDIS_URL names the shipped Redis Service, METRICS_TOKEN is there; scrape annotations point at the container port and /metrics', () => {
    const secrets = secretExample.find((s) => s.metadata.name === 'docproc-secrets')!.stringData!;
    const redisService = named('Service', 'docproc-redis');
    expect(new URL(secrets.REDIS_URL!).host).toBe(`${redisService.metadata.name}:${redisService.spec.ports[0].port}`);
    expect(secrets.METRICS_TOKEN).toBeTruthy();
    expect(container.envFrom).toContainEqual({ secretRef: { name: 'docproc-secrets' } });
    const annotations = deployment.spec.template.metadata.annotations;
    expect(annotations['prometheus.io/scrape']).toBe('true');
    expect(Number(annotations['prometheus.io/port'])).toBe(container.ports.find((p: any) => p.name === 'http').containerPort);
    expect(annotations['prometheus.io/path']).toBe('/metrics');
    expect(named('ConfigMap', 'docproc-config').data!.TRUST_REQUEST_ID).toBe('true');
  });
});

describe('the jail and the container runtime: README, compose and Kubernetes say the same', () => {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('#### The jail and the container runtime'));
  const rows = [...section.matchAll(/^\| (.+?) \| (.+?) \| (.+?) \| (.+?) \|$/gm)].filter((m) => m[1] !== 'The jail needs').map((m) => ({ compose: m[3]!, kubernetes: m[4]! }));

  it('compose ships exactly the security_opt the README lists', () => {
    const listed = rows.flatMap((r) => [...r.compose.matchAll(/`([a-z]+=unconfined)`/g)].map((m) => m[1]));
    expect(listed.sort()).toEqual(['apparmor=unconfined', 'seccomp=unconfined', 'systempaths=unconfined']);
    expect([...(compose.services.docproc!.security_opt ?? [])].sort()).toEqual(listed);
  });

  it('Kubernetes ships the same relaxations, and no privilege or capability', () => {
    const pod = deployment.spec.template.spec;
    expect(rows.map((r) => r.kubernetes).join(' ')).toMatch(/seccompProfile\.type: Unconfined[\s\S]*appArmorProfile\.type: Unconfined[\s\S]*procMount: Unmasked[\s\S]*hostUsers: false/);
    expect(pod.securityContext.seccompProfile).toEqual({ type: 'Unconfined' });
    expect(pod.securityContext.appArmorProfile).toEqual({ type: 'Unconfined' });
    expect(container.securityContext.procMount).toBe('Unmasked');
    expect(pod.hostUsers).toBe(false);
    expect(container.securityContext.privileged).toBeUndefined();
    expect(container.securityContext.capabilities).toEqual({ drop: ['ALL'] });
    expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
  });
});

describe('proxies in front of the service', () => {
  let t: TestApp;
  let nginx: Nginx;
  let dir: string;
  let largestBody: number;
  let requestTimeoutMs: number;
  let key: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'docproc-deploy-'));
    t = await buildTestApp({ API_KEY_PEPPER: 'deploy-pepper-0123456789abcdef', RATE_LIMIT_MAX: '1000', TRUST_PROXY: '1', TRUST_REQUEST_ID: compose.services.docproc!.environment!.TRUST_REQUEST_ID! });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    mkdirSync(dir, { recursive: true });
    key = await issueTestKey(t.app);
    nginx = await startNginx(dir, await freePort(), [(t.app.server.address() as AddressInfo).port]);
    // Each operation's body budget, as the service states it when a declared body is past it ("… accepts (51 MB)").
    const budgets = await Promise.all(['/v1/convert', '/v1/annotate', '/v1/sign', '/v1/verify'].map(async (url) => {
      const res = await t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': String(1024 ** 3) }, payload: '' });
      const stated = /accepts \((\d+(?:\.\d)?) MB\)/.exec((res.json() as { detail: string }).detail);
      if (!stated) throw new Error(`${url}: ${res.body}`);
      return (Number(stated[1]) + 0.05) * 1024 * 1024;
    }));
    largestBody = Math.ceil(Math.max(...budgets));
    requestTimeoutMs = t.app.services.config.limits.requestTimeoutMs;
  }, 60_000);

  afterAll(async () => {
    await nginx?.stop();
    await t?.app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const megabytes = (value: string) => Number(/^(\d+)m$/i.exec(value)![1]) * 1024 * 1024;

  it('the shipped body limits (nginx, Ingress) are above the largest body an operation takes', () => {
    const nginxLimit = /client_max_body_size (\d+m);/.exec(readFileSync(path.join(root, 'deploy/nginx.conf'), 'utf8'))![1]!;
    const ingress = named('Ingress', 'docproc').metadata.annotations!;
    expect(largestBody).toBeGreaterThan(50 * 1024 * 1024);
    expect(megabytes(nginxLimit)).toBeGreaterThan(largestBody);
    expect(megabytes(ingress['nginx.ingress.kubernetes.io/proxy-body-size']!)).toBeGreaterThan(largestBody);
    expect(Number(ingress['nginx.ingress.kubernetes.io/proxy-read-timeout']) * 1000).toBeGreaterThan(requestTimeoutMs);
  });

  it('nginx keeps a caller\'s well-formed X-Request-Id, and replaces a malformed one with its own', async () => {
    const kept = await fetch(`${nginx.base}/v1/health`, { headers: { 'x-request-id': 'caller-trace:42.a_b' } });
    expect(kept.headers.get('x-request-id')).toBe('caller-trace:42.a_b');
    const replaced = await fetch(`${nginx.base}/v1/health`, { headers: { 'x-request-id': 'has spaces/and slashes' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
    const none = await fetch(`${nginx.base}/v1/health`);
    expect(none.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
  });

  it('a body just past the largest operation budget is answered by the service (problem+json 413), not by nginx', async () => {
    const size = largestBody + 1;
    const answer = await new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
      const url = new URL(`${nginx.base}/v1/convert`);
      const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(size), authorization: `Bearer ${key}` } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type']), body }));
      });
      req.on('error', reject);
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      let sent = 0;
      const pump = () => {
        while (sent < size) {
          const part = chunk.subarray(0, Math.min(chunk.length, size - sent));
          sent += part.length;
          if (!req.write(part)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    expect(answer.type, `${answer.status} ${answer.body.slice(0, 200)}`).toMatch(/^application\/problem\+json/);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).code).toBe('FILE_TOO_LARGE');
  }, 60_000);
});
