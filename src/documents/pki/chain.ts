import { issuedBy, oneLine, type Cert } from './certificates.js';
import type { TrustStore } from './trust.js';

export interface ChainResult {
  /** Leaf first; ends at the anchor when trusted. */
  chain: Cert[];
  trusted: boolean;
  problem?: string;
}

const MAX_CHAIN = 12;

/**
 * Builds the chain from the signer upwards using the certificates carried in the CMS and the
 * trust anchors, checking every signature on the way. Intermediates must be CA certificates.
 */
export function buildChain(leaf: Cert, pool: Cert[], trust: TrustStore): ChainResult {
  const chain: Cert[] = [leaf];
  let current = leaf;
  for (let depth = 0; depth < MAX_CHAIN; depth++) {
    if (trust.isAnchor(current)) return { chain, trusted: true };
    const anchor = trust.anchors.find((a) => issuedBy(current, a));
    if (anchor) {
      chain.push(anchor);
      return { chain, trusted: true };
    }
    const next = pool.find((c) => !chain.includes(c) && c.x509.fingerprint256 !== current.x509.fingerprint256 && issuedBy(current, c));
    if (!next) {
      const selfSigned = issuedBy(current, current);
      return {
        chain,
        trusted: false,
        problem: selfSigned
          ? `the chain ends at the self-signed certificate "${oneLine(current.x509.subject)}", which is not a trusted root`
          : `no issuer certificate found for "${oneLine(current.x509.subject)}" among the embedded certificates and trusted roots`,
      };
    }
    if (!next.x509.ca) return { chain, trusted: false, problem: `issuer "${oneLine(next.x509.subject)}" is not a CA certificate` };
    chain.push(next);
    current = next;
  }
  return { chain, trusted: false, problem: 'certificate chain is too long' };
}
