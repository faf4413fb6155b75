import { describe, expect, it } from 'vitest';
import { freshFor } from '../../../src/documents/pki/revocation/check.js';
import type { EvidenceVerdict } from '../../../src/documents/pki/revocation/evidence.js';

/** ETSI EN 319 102-1 §5.2.5: fresh for T when issued after T − (nextUpdate − thisUpdate). */
const good = (producedAt: string, nextUpdate: string | null): EvidenceVerdict => ({ status: 'good', method: 'ocsp', producedAt, nextUpdate });

describe('revocation evidence freshness', () => {
  it('against the current time: fresh until nextUpdate, not after', () => {
    const ocsp = good('2025-01-01T10:00:00Z', '2025-01-01T10:10:00Z');
    expect(freshFor(ocsp, new Date('2025-01-01T10:05:00Z'))).toBe(true);
    expect(freshFor(ocsp, new Date('2025-01-01T10:10:00Z'))).toBe(true);
    expect(freshFor(ocsp, new Date('2025-01-01T10:10:01Z'))).toBe(false);
  });

  it('against a time-stamp: evidence fetched shortly before it counts when it was still current then', () => {
    const crl = good('2025-01-01T00:00:00Z', '2025-01-08T00:00:00Z');
    expect(freshFor(crl, new Date('2025-01-01T00:00:01Z'))).toBe(true);
    expect(freshFor(crl, new Date('2025-01-07T23:59:59Z'))).toBe(true);
    expect(freshFor(crl, new Date('2025-01-08T00:00:01Z'))).toBe(false);
    // Issued after the validation time: always fresh.
    expect(freshFor(crl, new Date('2024-06-01T00:00:00Z'))).toBe(true);
  });

  it('without nextUpdate the answer speaks for its own moment and later only', () => {
    const open = good('2025-01-01T10:00:00Z', null);
    expect(freshFor(open, new Date('2025-01-01T09:59:59Z'))).toBe(true);
    expect(freshFor(open, new Date('2025-01-01T10:00:00Z'))).toBe(true);
    expect(freshFor(open, new Date('2025-01-01T10:00:01Z'))).toBe(false);
  });

  it('a nextUpdate before thisUpdate gives no window', () => {
    expect(freshFor(good('2025-01-01T10:00:00Z', '2025-01-01T09:00:00Z'), new Date('2025-01-01T10:00:01Z'))).toBe(false);
  });
});
