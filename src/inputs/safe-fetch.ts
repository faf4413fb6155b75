import { lookup as dnsLookup } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { AppError, ErrorCode, fileTooLarge } from '../errors/app-error.js';

/**
 * Fetches a caller-given URL without letting it reach the service's own network (SSRF).
 * The resolved address is checked inside the socket's DNS lookup, so the checked address is
 * the one connected to (no DNS-rebinding window), and every redirect hop is checked again.
 */
export interface SafeFetchOptions {
  allowHttp: boolean;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects?: number;
  /** Test seam: decides whether an address may be reached. Defaults to public addresses only. */
  isAddressAllowed?: (address: string, family: number) => boolean;
}

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96], ['2001:db8::', 32],
] as const) blocked.addSubnet(net, prefix, 'ipv6');

/** Public unicast only: no loopback, private, link-local (cloud metadata), CGNAT, multicast or reserved. */
export function isPublicAddress(address: string, family: number): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return !blocked.check(mapped[1], 'ipv4');
  return !blocked.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

const notAllowed = (message: string) => new AppError(400, ErrorCode.URL_NOT_ALLOWED, message);
const fetchFailed = (message: string) => new AppError(422, ErrorCode.URL_FETCH_FAILED, message);

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

function checkUrl(raw: string, allowHttp: boolean, isAllowed: (a: string, f: number) => boolean): URL {
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
  const family = isIP(host);
  if (family && !isAllowed(host, family)) throw notAllowed('The URL points to a private or reserved address.');
  return url;
}

function requestOnce(url: URL, options: SafeFetchOptions, deadline: number): Promise<{ status: number; location?: string; body: Buffer }> {
  const isAllowed = options.isAddressAllowed ?? isPublicAddress;
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return reject(fetchFailed('Fetching the URL timed out.'));
    const req = client.get(url, { lookup: guardedLookup(isAllowed), timeout: remaining, headers: { 'user-agent': 'docproc' } }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        res.resume();
        return resolve({ status, location: res.headers.location, body: Buffer.alloc(0) });
      }
      const declared = Number(res.headers['content-length'] ?? 0);
      if (declared > options.maxBytes) {
        req.destroy();
        return reject(fileTooLarge(`The document at the URL is larger than ${options.maxBytes} bytes.`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) {
          req.destroy();
          reject(fileTooLarge(`The document at the URL is larger than ${options.maxBytes} bytes.`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => resolve({ status, body: Buffer.concat(chunks) }));
      res.on('error', () => reject(fetchFailed('The connection broke while fetching the URL.')));
    });
    const timer = setTimeout(() => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })), remaining);
    req.on('close', () => clearTimeout(timer));
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRBLOCKED') reject(notAllowed('The URL resolves to a private or reserved address.'));
      else if (err.code === 'ETIMEDOUT') reject(fetchFailed('Fetching the URL timed out.'));
      else reject(fetchFailed(`The URL could not be fetched (${err.code ?? 'network error'}).`));
    });
  });
}

export async function safeFetch(raw: string, options: SafeFetchOptions): Promise<Buffer> {
  const isAllowed = options.isAddressAllowed ?? isPublicAddress;
  const deadline = Date.now() + options.timeoutMs;
  let url = checkUrl(raw, options.allowHttp, isAllowed);
  for (let hop = 0; hop <= (options.maxRedirects ?? 3); hop++) {
    const res = await requestOnce(url, options, deadline);
    if (res.status >= 300 && res.status < 400) {
      if (!res.location) throw fetchFailed('The URL answered with a redirect without a location.');
      url = checkUrl(new URL(res.location, url).toString(), options.allowHttp, isAllowed);
      continue;
    }
    if (res.status !== 200) throw fetchFailed(`The URL answered with HTTP ${res.status}.`);
    return res.body;
  }
  throw fetchFailed('The URL redirected too many times.');
}
