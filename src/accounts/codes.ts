import { createHmac, randomInt } from 'node:crypto';

/** Six-digit e-mail verification codes, stored only as a peppered HMAC bound to the address. */
export function generateCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Opaque id of an address, so code records do not carry the address itself. */
export function emailId(email: string, pepper: string): string {
  return createHmac('sha256', pepper).update(`email:${normalizeEmail(email)}`).digest('hex');
}

export function hashCode(email: string, code: string, pepper: string): string {
  return createHmac('sha256', pepper).update(`code:${normalizeEmail(email)}:${code}`).digest('hex');
}
