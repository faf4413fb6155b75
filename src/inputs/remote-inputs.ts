import { DomainError, ErrorCode } from '../errors/domain-error.js';
import { safeFetch } from './safe-fetch.js';

/**
 * The one remote-input policy: which caller-given URLs the service fetches (a `{ url }` document,
 * annotate's image fields, the images a Markdown/HTML document refers to), under which per-request
 * budget, and with which refusals. Every such fetch is made here, through safeFetch (the SSRF guard);
 * engines (src/documents/*) receive the bytes and never fetch on their own. Operations call it:
 * "fetch images then fill" (operations/annotate.ts) and "fetch images then render markup"
 * (operations/convert.ts).
 *
 * Hosts and schemes:
 * - `ALLOW_URL_INPUTS=true`: any public host, https only (http too with `ALLOW_HTTP_URL_INPUTS`), for
 *   documents and images;
 * - `REMOTE_IMAGE_HOSTS`: images (not documents) also from these hosts (`images.example.com`,
 *   `*.cdn.example.net`), http or https, with or without ALLOW_URL_INPUTS;
 * - private, loopback and reserved addresses only with `OUTBOUND_ALLOW_PRIVATE_ADDRESSES=true`;
 * - the rules hold for every redirect hop.
 *
 * Per-request image budget: at most REMOTE_IMAGE_BUDGET.maxImages distinct image URLs are fetched,
 * each at most REMOTE_IMAGE_BUDGET.maxImageBytes, all together at most `URL_INPUT_MAX_BYTES`, all
 * within one deadline of `URL_INPUT_TIMEOUT_MS` (fetched together, so each has that long).
 *
 * A refusal is a DomainError: URL_NOT_ALLOWED (disabled, host, scheme, private address),
 * FILE_TOO_LARGE (one image, or the request's images together), DOCUMENT_TOO_COMPLEX with `limit`
 * `remoteInputs.maxImages` (too many), URL_FETCH_FAILED (anything on the network). Annotate answers
 * with it; a Markdown/HTML conversion names its message in an IMAGE_NOT_EMBEDDED warning and uses
 * the image's alt text.
 */
export interface RemoteInputSettings {
  /** ALLOW_URL_INPUTS: URLs from any public host. */
  anyHost: boolean;
  /** ALLOW_HTTP_URL_INPUTS: http as well as https for those. */
  allowHttp: boolean;
  /** REMOTE_IMAGE_HOSTS: hosts images may come from (http or https). */
  imageHosts: readonly string[];
  /** OUTBOUND_ALLOW_PRIVATE_ADDRESSES. */
  allowPrivateAddresses: boolean;
  /** URL_INPUT_MAX_BYTES: one fetched document; a request's fetched images together. */
  maxBytes: number;
  /** URL_INPUT_TIMEOUT_MS: one fetched document; a request's fetched images together. */
  timeoutMs: number;
}

export const REMOTE_IMAGE_BUDGET = {
  /** Distinct image URLs fetched for one request. */
  maxImages: 20,
  /** One fetched image (annotate's own image limit, IMAGE_LIMITS.maxBytes, is the same 15 MB). */
  maxImageBytes: 15 * 1024 * 1024,
} as const;

/** A remote image as the policy answers for it: its bytes, or why it was not fetched. */
export type RemoteImageResult = { url: string; bytes: Buffer } | { url: string; error: DomainError };

const notAllowed = (message: string) => new DomainError(ErrorCode.URL_NOT_ALLOWED, message);

/** `images.example.com` exactly, or `*.example.com` for its subdomains. */
export function hostMatches(host: string, patterns: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return patterns.some((pattern) => {
    const p = pattern.toLowerCase();
    return p.startsWith('*.') ? h.endsWith(p.slice(1)) : h === p;
  });
}

export class RemoteInputs {
  constructor(readonly settings: RemoteInputSettings) {}

  /** Whether images by URL can be fetched at all (some host allowed). */
  get imagesEnabled(): boolean {
    return this.settings.anyHost || this.settings.imageHosts.length > 0;
  }

  /** The image rule for one URL (and each redirect hop): listed image host over http(s), or any host when ALLOW_URL_INPUTS. */
  private imageUrlAllowed(host: string, protocol: string): boolean {
    if (protocol !== 'https:' && protocol !== 'http:') return false;
    if (hostMatches(host, this.settings.imageHosts)) return true;
    return this.settings.anyHost && (protocol === 'https:' || this.settings.allowHttp);
  }

  /** The refusal of every image URL when no host is allowed at all (undefined when some are). */
  imagesDisabled(): DomainError | undefined {
    return this.imagesEnabled ? undefined : notAllowed('Images by URL are disabled on this service (ALLOW_URL_INPUTS, REMOTE_IMAGE_HOSTS); send the image itself.');
  }

  /** Why an image URL is refused before any request (undefined: it may be fetched). */
  imageRefusal(raw: string): DomainError | undefined {
    const disabled = this.imagesDisabled();
    if (disabled) return disabled;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return notAllowed('The image URL is not a valid absolute URL.');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return notAllowed('Only http and https image URLs are fetched.');
    if (this.imageUrlAllowed(url.hostname, url.protocol)) return undefined;
    if (this.settings.anyHost && url.protocol === 'http:' && !hostMatches(url.hostname, this.settings.imageHosts)) {
      return notAllowed('Only https URLs are accepted (ALLOW_HTTP_URL_INPUTS); the host is not in REMOTE_IMAGE_HOSTS.');
    }
    return notAllowed('The host is not allowed for images (REMOTE_IMAGE_HOSTS).');
  }

  /** One request's image fetches: its count, bytes and deadline are shared by every call. */
  imageRequest(): RemoteImageRequest {
    return new RemoteImageRequest(this);
  }

  /** A `{ url }` document: only with ALLOW_URL_INPUTS, any public host, https unless ALLOW_HTTP_URL_INPUTS. */
  async fetchDocument(url: string): Promise<Buffer> {
    const { anyHost, allowHttp, allowPrivateAddresses, maxBytes, timeoutMs } = this.settings;
    if (!anyHost) {
      throw notAllowed('Documents by URL are disabled on this service (ALLOW_URL_INPUTS); send the document as base64 or as a multipart file.');
    }
    return safeFetch(url, { allowHttp, allowPrivateAddresses, maxBytes, timeoutMs });
  }

  /** @internal the fetch of one image under a request's shared bytes and deadline. */
  fetchImage(url: string, sharedBytes: { left: number; message: string }, deadline: number): Promise<Buffer> {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return Promise.reject(new DomainError(ErrorCode.URL_FETCH_FAILED, 'The URL could not be fetched.'));
    return safeFetch(url, {
      // The scheme is decided per host by imageUrlAllowed, for the first URL and every redirect hop.
      allowHttp: true,
      isHostAllowed: (host, protocol) => this.imageUrlAllowed(host, protocol),
      allowPrivateAddresses: this.settings.allowPrivateAddresses,
      maxBytes: REMOTE_IMAGE_BUDGET.maxImageBytes,
      what: 'image',
      sharedBytes,
      timeoutMs: remaining,
    });
  }
}

/**
 * The image budget of one request. `fetch` answers for every distinct URL in order: those refused by
 * the host rules do not count; of the others the first maxImages (over all calls) are fetched
 * together, the rest refused as too many.
 */
export class RemoteImageRequest {
  private fetched = 0;
  private deadline: number | undefined;
  private readonly sharedBytes: { left: number; message: string };

  constructor(private readonly inputs: RemoteInputs) {
    const max = inputs.settings.maxBytes;
    this.sharedBytes = { left: max, message: `The request's remote images are larger than ${max} bytes together (URL_INPUT_MAX_BYTES).` };
  }

  /** What would be refused before any request is made: host and scheme rules, then the count. */
  private plan(urls: readonly string[]): Map<string, DomainError | undefined> {
    const plan = new Map<string, DomainError | undefined>();
    let count = this.fetched;
    for (const url of urls) {
      if (plan.has(url)) continue;
      const refusal = this.inputs.imageRefusal(url);
      if (refusal) plan.set(url, refusal);
      else if (count >= REMOTE_IMAGE_BUDGET.maxImages) plan.set(url, tooManyImages());
      else {
        count++;
        plan.set(url, undefined);
      }
    }
    return plan;
  }

  /** The first refusal `fetch` would give without fetching anything (annotate refuses before it fetches). */
  firstRefusal(urls: readonly string[]): DomainError | undefined {
    for (const refusal of this.plan(urls).values()) if (refusal) return refusal;
    return undefined;
  }

  async fetch(urls: readonly string[]): Promise<RemoteImageResult[]> {
    const plan = this.plan(urls);
    this.deadline ??= Date.now() + this.inputs.settings.timeoutMs;
    const deadline = this.deadline;
    const results = await Promise.all(
      [...plan].map(async ([url, refusal]): Promise<RemoteImageResult> => {
        if (refusal) return { url, error: refusal };
        this.fetched++;
        try {
          return { url, bytes: await this.inputs.fetchImage(url, this.sharedBytes, deadline) };
        } catch (err) {
          if (err instanceof DomainError) return { url, error: err };
          throw err;
        }
      }),
    );
    return results;
  }
}

function tooManyImages(): DomainError {
  const max = REMOTE_IMAGE_BUDGET.maxImages;
  return new DomainError(ErrorCode.DOCUMENT_TOO_COMPLEX, `More than ${max} remote images in one request (at most ${max} are fetched).`, {
    extensions: { limit: { name: 'remoteInputs.maxImages', max } },
  });
}
