import { describe, expect, it } from 'vitest';
import { ANCHOR_SOURCES, SYSTEM_BUNDLE, TrustStore, readPemBundle, type PortableAnchor } from '../../../src/documents/pki/trust.js';

/**
 * TrustStore.forVerification caches the operator's store per set of anchors and roots, matched by
 * content (each worker task receives fresh copies of the lists): equal lists share one store, any
 * difference in a root, an anchor's certificate, source or period builds another.
 */
describe('TrustStore.forVerification cache', () => {
  const roots = readPemBundle(SYSTEM_BUNDLE, 'TRUST_SYSTEM');
  const anchors: PortableAnchor[] = roots.slice(0, 3).map((pem) => ({ pem, source: 'EU trusted list XX: test' }));

  it('gives the same store for fresh copies of equal lists', () => {
    const store = TrustStore.forVerification(roots.slice(3), anchors);
    const again = structuredClone({ roots: roots.slice(3), anchors });
    expect(TrustStore.forVerification(again.roots, again.anchors)).toBe(store);
    expect(TrustStore.forVerification(structuredClone(roots))).toBe(TrustStore.forVerification(roots));
  });

  it('builds another store when a root, an anchor or its period differs', () => {
    const store = TrustStore.forVerification(roots.slice(3), anchors);
    const variants: Array<[string[], PortableAnchor[]]> = [
      [roots.slice(4), anchors],
      [roots.slice(3), anchors.slice(1)],
      [roots.slice(3), [{ ...anchors[0]!, source: 'TRUST_ROOTS' }, ...anchors.slice(1)]],
      [roots.slice(3), [{ ...anchors[0]!, until: '2020-01-01T00:00:00Z' }, ...anchors.slice(1)]],
      [roots.slice(3), [{ ...anchors[0]!, pem: roots[5]! }, ...anchors.slice(1)]],
    ];
    for (const [r, a] of variants) expect(TrustStore.forVerification(r, a)).not.toBe(store);
    const other = TrustStore.forVerification(roots.slice(3), [{ ...anchors[0]!, until: '2020-01-01T00:00:00Z' }, ...anchors.slice(1)]);
    expect(other.anchors.length).toBe(store.anchors.length);
  });

  it("adds a request's own roots on top without caching them", () => {
    const own: PortableAnchor = { pem: roots[10]!, source: ANCHOR_SOURCES.request };
    const base = TrustStore.forVerification(roots.slice(20), anchors);
    const withOwn = TrustStore.forVerification(roots.slice(20), [...anchors, own]);
    expect(withOwn).not.toBe(base);
    expect(withOwn.anchors.length).toBe(base.anchors.length + 1);
    expect(TrustStore.forVerification(roots.slice(20), anchors)).toBe(base);
  });
});
