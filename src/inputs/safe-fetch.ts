import { lookup as dnsLookup } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { DomainError, ErrorCode, fileTooLarge } from '../errors/domain-error.js';

/**
 * The one outbound guard: every request the service makes to a URL (URL inputs, remote images,
 * the TSA, later OCSP/CRL) goes through here, so it cannot reach the service's own network (SSRF).
 * The resolved address is checked inside the socket's DNS lookup, so the checked address is the
 * one connected to (no DNS-rebinding window); the scheme, host allow-list and address are checked
 * again on every redirect hop; every network failure gives the same answer (no port-scan oracle).
 */
export interface SafeFetchOptions {
  allowHttp: boolean;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects?: number;
  /**
   * Host allow-list applied to the first URL and to every redirect target (absent: any public host).
   * `protocol` ('http:' or 'https:') lets a policy allow http for some hosts only.
   */
  isHostAllowed?: (hostname: string, protocol: string) => boolean;
  /**
   * Bytes shared by several fetches (one request's remote inputs): every chunk received is taken
   * from `left`, and a fetch that would take it below zero fails with FILE_TOO_LARGE and `message`.
   */
  sharedBytes?: { left: number; message: string };
  /** OUTBOUND_ALLOW_PRIVATE_ADDRESSES: also reach private and loopback addresses (on-premise TSA/OCSP, test PKIs). */
  allowPrivateAddresses?: boolean;
  /** Test seam: decides whether an address may be reached. Defaults to public addresses only. */
  isAddressAllowed?: (address: string, family: number) => boolean;
  /** What the URL holds, as a size refusal names it (default 'document'). */
  what?: string;
  method?: 'GET' | 'POST';
  body?: Buffer;
  headers?: Record<string, string>;
}

// Two lists: Node's BlockList matches IPv4 addresses against IPv6 rules as ::ffff:a.b.c.d, so one
// list blocking IPv4-mapped IPv6 would block every IPv4 address.
const blockedV4 = new BlockList();
const blockedV6 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blockedV4.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64],
  // Every form that carries an IPv4 address (and so could name a private one): IPv4-compatible and
  // -mapped, SIIT, NAT64 (well-known and local-use), 6to4, Teredo.
  ['::', 96], ['::ffff:0:0', 96], ['::ffff:0:0:0', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['2002::', 16], ['2001::', 32],
] as const) blockedV6.addSubnet(net, prefix, 'ipv6');

/** Public unicast only: no loopback, private, link-local (cloud metadata), CGNAT, multicast, reserved or IPv4-carrying IPv6. */
export function isPublicAddress(address: string, family: number): boolean {
  return family === 6 ? !blockedV6.check(address, 'ipv6') : !blockedV4.check(address, 'ipv4');
}

const notAllowed = (message: string) => new DomainError(ErrorCode.URL_NOT_ALLOWED, message);
const fetchFailed = (message: string) => new DomainError(ErrorCode.URL_FETCH_FAILED, message);
/** The same answer for refused, reset, unreachable, timed out and unresolvable: nothing to map ports with. */
const networkFailure = () => fetchFailed('The URL could not be fetched.');

function guardedLookup(isAllowed: (a: string, f: number) => boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      const list = addresses as unknown as { address: string; family: number }[];
      const refused = list.find((a) => !isAllowed(a.address, a.family));
      if (refused || list.length === 0) {
        const e = Object.assign(new Error(`address ${refused?.address ?? '(none)'} is not public`), { code: 'EADDRBLOCKED' });
        return callback(e, '', 4);
      }
      if ((options as { all?: boolean }).all) return (callback as (e: null, a: typeof list) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

function checkUrl(raw: string, options: SafeFetchOptions, isAllowed: (a: string, f: number) => boolean): URL {
  const { allowHttp } = options;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw notAllowed('The document URL is not a valid absolute URL.');
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) {
    throw notAllowed(allowHttp ? 'Only http and https URLs are accepted.' : 'Only https URLs are accepted.');
  }
  if (url.username || url.password) throw notAllowed('URLs with credentials are not accepted.');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (options.isHostAllowed && !options.isHostAllowed(host, url.protocol)) throw notAllowed('The URL (or a redirect) leads to a host that is not allowed.');
  const family = isIP(host);
  if (family && !isAllowed(host, family)) throw notAllowed('The URL points to a private or reserved address.');
  return url;
}

const addressPolicy = (options: SafeFetchOptions) => options.isAddressAllowed ?? (options.allowPrivateAddresses ? () => true : isPublicAddress);

function requestOnce(url: URL, options: SafeFetchOptions, deadline: number): Promise<{ status: number; location?: string; body: Buffer }> {
  const isAllowed = addressPolicy(options);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return reject(networkFailure());
    const headers = { 'user-agent': 'docproc', ...options.headers, ...(options.body ? { 'content-length': String(options.body.length) } : {}) };
    // agent: false — a fresh connection every time. Node 20's global agent keeps sockets alive and
    // reuses them without calling `lookup`, so a socket opened under one policy (a private address
    // allowed) would serve a request made under another (public only), past the address check.
    const req = client.request(url, { method: options.method ?? 'GET', agent: false, lookup: guardedLookup(isAllowed), timeout: remaining, headers }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        res.resume();
        return resolve({ status, location: res.headers.location, body: Buffer.alloc(0) });
      }
      const declared = Number(res.headers['content-length'] ?? 0);
      const shared = options.sharedBytes;
      if (declared > options.maxBytes || (shared && declared > shared.left)) {
        req.destroy();
        return reject(fileTooLarge(declared > options.maxBytes ? `The ${options.what ?? 'document'} at the URL is larger than ${options.maxBytes} bytes.` : shared!.message));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (shared) shared.left -= chunk.length;
        if (size > options.maxBytes || (shared && shared.left < 0)) {
          req.destroy();
          reject(fileTooLarge(size > options.maxBytes ? `The ${options.what ?? 'document'} at the URL is larger than ${options.maxBytes} bytes.` : shared!.message));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => resolve({ status, body: Buffer.concat(chunks) }));
      res.on('error', () => reject(networkFailure()));
    });
    req.end(options.body);
    const timer = setTimeout(() => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })), remaining);
    req.on('close', () => clearTimeout(timer));
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRBLOCKED') reject(notAllowed('The URL resolves to a private or reserved address.'));
      else reject(networkFailure());
    });
  });
}

/** GET (or POST) a URL through the guard; resolves with the body of a 200 answer. */
export async function safeFetch(raw: string, options: SafeFetchOptions): Promise<Buffer> {
  const isAllowed = addressPolicy(options);
  const deadline = Date.now() + options.timeoutMs;
  let url = checkUrl(raw, options, isAllowed);
  const maxRedirects = options.method === 'POST' ? 0 : (options.maxRedirects ?? 3);
  for (let hop = 0; hop <= maxRedirects; hop++) {
    const res = await requestOnce(url, options, deadline);
    if (res.status >= 300 && res.status < 400) {
      if (!res.location) throw fetchFailed('The URL answered with a redirect without a location.');
      let next: string;
      try {
        next = new URL(res.location, url).toString();
      } catch {
        throw fetchFailed('The URL answered with an unreadable redirect.');
      }
      url = checkUrl(next, options, isAllowed);
      continue;
    }
    if (res.status !== 200) throw fetchFailed(`The URL answered with HTTP ${res.status}.`);
    return res.body;
  }
  throw fetchFailed('The URL redirected too many times.');
}
