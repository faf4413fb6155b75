import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../../src/config.js';
import { MAX_RESPONSE_HEAD_BYTES } from '../../../src/http/response-head.js';

/**
 * No cluster or Docker engine here: the deploy files are checked for what would break a
 * rollout — YAML that does not parse, names that do not match, probes on the wrong paths, a
 * grace period shorter than the drain, settings the service itself would refuse at start-up.
 */
const root = path.resolve(import.meta.dirname, '../../..');
const k8sDir = path.join(root, 'deploy/kubernetes');

type Doc = Record<string, any>;

function documentsOf(file: string): Doc[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  for (const doc of docs) expect(doc.errors, `${file}: ${doc.errors.join('; ')}`).toEqual([]);
  return docs.map((d) => d.toJS() as Doc).filter(Boolean);
}

const all = readdirSync(k8sDir)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) => documentsOf(path.join(k8sDir, f)).map((doc) => ({ file: f, doc })));
const one = (kind: string, name?: string) => {
  const found = all.filter(({ doc }) => doc.kind === kind && (!name || doc.metadata?.name === name));
  expect(found, `${kind} ${name ?? ''}`).toHaveLength(1);
  return found[0]!.doc;
};

const deployment = () => one('Deployment');
const container = () => deployment().spec.template.spec.containers[0];
const configMap = () => one('ConfigMap');
const secret = (name: string) => one('Secret', name);
const toBytes = (quantity: string) => {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi)?$/.exec(quantity)!;
  return Number(m[1]) * { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, '': 1 }[m[2] ?? '']!;
};

describe('deploy/kubernetes', () => {
  it('every file parses and the kustomization lists every non-example manifest', () => {
    expect(all.map(({ doc }) => doc.kind).sort()).toEqual([
      'ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'Ingress', 'Kustomization', 'NetworkPolicy', 'NetworkPolicy',
      'PodDisruptionBudget', 'Secret', 'Secret', 'Service', 'Service', 'StatefulSet',
    ]);
    const kustomization = one('Kustomization');
    const listed = new Set(kustomization.resources);
    const manifests = [...new Set(all.filter(({ doc }) => doc.kind !== 'Kustomization').map(({ file }) => file))];
    expect(manifests.filter((f) => !f.includes('example')).every((f) => listed.has(f))).toBe(true);
    expect(manifests.filter((f) => f.includes('example')).some((f) => listed.has(f))).toBe(false);
  });

  it('probes: liveness on /v1/health, readiness on /v1/health/ready, on the container port', () => {
    const c = container();
    expect(c.livenessProbe.httpGet).toEqual({ path: '/v1/health', port: 'http' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/v1/health/ready', port: 'http' });
    expect(c.startupProbe.httpGet.path).toBe('/v1/health');
    expect(c.ports).toContainEqual({ name: 'http', containerPort: Number(configMap().data.PORT) });
  });

  it('the grace period outlasts the preStop sleep plus SHUTDOWN_GRACE_MS', () => {
    const [command, seconds] = container().lifecycle.preStop.exec.command;
    expect(command).toBe('sleep');
    const graceMs = Number(configMap().data.SHUTDOWN_GRACE_MS);
    expect(deployment().spec.template.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(Number(seconds) * 1000 + graceMs);
  });

  it('settings come from the ConfigMap and the Secrets, and the service accepts them', () => {
    const c = container();
    expect(c.envFrom).toEqual([{ configMapRef: { name: configMap().metadata.name } }, { secretRef: { name: 'docproc-secrets' } }]);
    const secrets = secret('docproc-secrets').stringData;
    for (const name of ['REDIS_URL', 'API_KEY_PEPPER', 'SMTP_URL']) {
      expect(secrets[name], name).toBeTruthy();
      expect(configMap().data[name], `${name} must not be in the ConfigMap`).toBeUndefined();
    }
    // The example Secret's pepper is a published placeholder: refused in production, so it must be replaced.
    expect(() => loadConfig({ NODE_ENV: 'production', ...configMap().data, ...secrets })).toThrow(/API_KEY_PEPPER/);
    const config = loadConfig({ NODE_ENV: 'production', ...configMap().data, ...secrets, API_KEY_PEPPER: 'a-real-random-secret-0123456789' });
    expect(config.redisUrl).toBeDefined();
    expect(config.pepperIsDefault).toBe(false);
    expect(config.trustProxy).toBe(1);
    // One office process per requested core; worker threads likewise.
    const cpus = Number(c.resources.requests.cpu);
    expect(config.office.poolSize).toBe(cpus);
    expect(config.workers.threads).toBe(cpus);
  });

  it('the signing identity is a Secret mounted read-only where SIGNING_P12 points', () => {
    const spec = deployment().spec.template.spec;
    const volume = spec.volumes.find((v: Doc) => v.secret?.secretName === 'docproc-signing');
    expect(volume).toBeDefined();
    secret('docproc-signing');
    const mount = container().volumeMounts.find((m: Doc) => m.name === volume.name);
    expect(mount.readOnly).toBe(true);
    expect(configMap().data.SIGNING_P12.startsWith(`${mount.mountPath}/`)).toBe(true);
    expect(path.basename(configMap().data.SIGNING_P12) in secret('docproc-signing').data).toBe(true);
  });

  it('memory: the limit holds the worst case of the README budget (main thread, every worker at its heap ceiling, every office process at its recycling threshold)', () => {
    const { resources } = container();
    const data = configMap().data;
    const mainThread = 300 * 1024 ** 2; // measured ~150–300 MB (README "Memory per replica")
    const perWorker = (Number(data.WORKER_MEMORY_MB) + 56) * 1024 ** 2; // heap ceiling + young generation + base
    const perOffice = (Number(data.OFFICE_MAX_RSS_MB) + 48) * 1024 ** 2; // + ~43 MB per python UNO bridge
    const worstCase = mainThread + Number(data.WORKER_THREADS) * perWorker + Number(data.OFFICE_POOL_SIZE) * perOffice;
    expect(toBytes(resources.limits.memory)).toBeGreaterThanOrEqual(worstCase);
    expect(toBytes(resources.requests.memory)).toBeLessThanOrEqual(toBytes(resources.limits.memory));
  });

  it('Service, HPA and PDB select the Deployment', () => {
    const labels = deployment().spec.template.metadata.labels;
    expect(deployment().spec.selector.matchLabels).toEqual(labels);
    expect(one('Service', 'docproc').spec.selector).toEqual(labels);
    expect(one('PodDisruptionBudget').spec.selector.matchLabels).toEqual(labels);
    const hpa = one('HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: deployment().metadata.name });
    expect(hpa.spec.metrics[0].resource.name).toBe('cpu');
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(one('PodDisruptionBudget').spec.maxUnavailable).toBeLessThan(hpa.spec.minReplicas);
    expect(one('Service', 'docproc').spec.ports[0].targetPort).toBe('http');
  });
});

describe('docker-compose.yml and deploy/nginx.conf', () => {
  const compose = () => documentsOf(path.join(root, 'docker-compose.yml'))[0]!;
  const nginx = readFileSync(path.join(root, 'deploy/nginx.conf'), 'utf8');

  it('runs several replicas behind the nginx load balancer, draining within the stop grace period', () => {
    const { docproc, lb } = compose().services;
    expect(docproc.deploy.replicas).toBeGreaterThanOrEqual(2);
    expect(docproc.ports).toBeUndefined(); // only the load balancer publishes a port
    expect(docproc.environment.REDIS_URL).toMatch(/^redis:\/\/redis:/);
    expect(lb.volumes).toContain('./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro');
    expect(Number(/^(\d+)s$/.exec(docproc.stop_grace_period)![1]) * 1000).toBeGreaterThan(30_000);
  });

  it('ships what production needs: the image’s NODE_ENV=production accepts its settings, secrets come by reference', () => {
    const { docproc } = compose().services;
    const environment: Record<string, string> = docproc.environment;
    // ${VAR:?message} and ${VAR?message}: compose refuses to start without the operator's value.
    expect(environment.API_KEY_PEPPER).toMatch(/^\$\{API_KEY_PEPPER:\?/);
    expect(environment.SIGNING_P12_PASSWORD).toMatch(/^\$\{SIGNING_P12_PASSWORD\?/);
    // The PKCS#12 is a compose secret from a file the operator names, mounted where SIGNING_P12 points.
    const [secretName] = docproc.secrets;
    expect(environment.SIGNING_P12).toBe(`/run/secrets/${secretName}`);
    expect(compose().secrets[secretName].file).toMatch(/^\$\{SIGNING_P12_FILE:\?/);
    expect(readFileSync(path.join(root, 'Dockerfile'), 'utf8')).toMatch(/^ENV NODE_ENV=production /m);
    const operatorValues: Record<string, string> = { API_KEY_PEPPER: 'a-real-random-secret-0123456789', SIGNING_P12_PASSWORD: '' };
    // Compose's interpolation: the operator's value, else the default after `:-`.
    const interpolate = (value: string) =>
      value.replace(/\$\{(\w+)(?::-([^}]*)|:?\?[^}]*)?\}/g, (_all, name: string, fallback?: string) => operatorValues[name] ?? fallback ?? '');
    const env = Object.fromEntries(Object.entries(environment).map(([name, value]) => [name, interpolate(String(value))]));
    const config = loadConfig({ NODE_ENV: 'production', ...env });
    expect(config.signing.p12).toBe(environment.SIGNING_P12);
    expect(config.signing.allowDevelopment).toBe(false);
  });

  it('nginx re-resolves the replicas, re-sends only requests that never reached one, and ejects a replica only for failed connections', () => {
    expect(nginx).toMatch(/server docproc:3000 resolve/);
    expect(nginx).toMatch(/zone docproc/);
    const directives = nginx.split('\n').filter((l) => !l.trim().startsWith('#')).join('\n');
    // No http_5xx (a replica's own answer is passed on and counts as no failure), no non_idempotent (a sent POST is never re-sent).
    expect(directives).toMatch(/^\s*proxy_next_upstream error timeout;$/m);
    // Keep-alive to the replicas (HTTP/1.1, no Connection: close), so an answer given before the body is read reaches the caller.
    expect(directives).toMatch(/^\s*keepalive \d+;$/m);
    expect(directives).toMatch(/proxy_http_version 1\.1;/);
    expect(directives).toMatch(/proxy_set_header Connection "";/);
    // The largest response head the service can send fits the buffer nginx reads it into.
    const buffer = Number(/proxy_buffer_size (\d+)k;/.exec(directives)![1]) * 1024;
    expect(buffer).toBeGreaterThanOrEqual(MAX_RESPONSE_HEAD_BYTES);
    // Above convert's whole-request budget, so the service answers an oversized upload itself.
    const bodyLimit = Number(/client_max_body_size (\d+)m;/.exec(directives)![1]) * 1024 * 1024;
    const { limits } = loadConfig({});
    expect(bodyLimit).toBeGreaterThan(2 * limits.maxFileBytes + 1024 * 1024);
    expect(compose().services.docproc.environment.TRUST_REQUEST_ID).toBe('true');
    // The caller's id only when it has the form docproc keeps, nginx's own otherwise.
    expect(directives).toMatch(/proxy_set_header X-Request-Id \$docproc_request_id;/);
    expect(directives).toMatch(/map \$http_x_request_id \$docproc_request_id \{\s*"~\^\[A-Za-z0-9\._:-\]\{1,128\}\$" \$http_x_request_id;\s*default \$request_id;/);
  });
});
