import { AppError, ErrorCode } from '../errors/app-error.js';
import type { Store } from '../store/store.js';
import { generateApiKey, hashApiKey } from './api-keys.js';
import { emailId, generateCode, hashCode, normalizeEmail } from './codes.js';
import type { Mailer } from './mailer.js';

export interface AccountSettings {
  pepper: string;
  codeTtlSeconds: number;
  codeMaxAttempts: number;
  registerPerEmailPerHour: number;
  registerPerIpPerHour: number;
  /** Verification attempts one client may make per hour, whatever the address. */
  verifyPerIpPerHour: number;
  /** How long a rotated key keeps working beside its successor (KEY_ROTATION_GRACE_SECONDS). */
  keyRotationGraceSeconds: number;
}

export interface RotatedKey {
  key: string;
  /** When the key that was rotated stops working (ISO 8601). */
  previousKeyExpiresAt: string;
}

/**
 * Each client has codeMaxAttempts tries at a code; all clients together have this many times
 * that before the code burns. A stranger's wrong tries cannot lock the owner out, and a 6-digit
 * code stays out of reach (at most 10 × 5 = 50 guesses per code, codes per address are limited).
 */
const GLOBAL_ATTEMPTS_FACTOR = 10;

/**
 * One answer for every failure, so nobody learns whether a code is pending for an address. 400, as
 * SuperDoc documents it for /v1/auth/verify (clients generated from its document expect no 401 there).
 */
const invalidCode = () =>
  new AppError(400, ErrorCode.INVALID_CODE, 'The verification code is not valid: it is wrong, expired, already used or was never requested. Request a new one if needed.');

const tooMany = (message: string, resetMs: number) =>
  new AppError(429, ErrorCode.RATE_LIMIT_ERROR, message, { headers: { 'retry-after': String(Math.max(1, Math.ceil(resetMs / 1000))) } });

/** Registration by e-mailed code and the minting of API keys. */
export class AccountService {
  constructor(private readonly store: Store, private readonly mailer: Mailer, private readonly settings: AccountSettings) {}

  async requestCode(rawEmail: string, clientIp: string): Promise<void> {
    const email = normalizeEmail(rawEmail);
    const id = emailId(email, this.settings.pepper);
    const perIp = await this.store.hit(`register:ip:${clientIp}`, 3600);
    if (perIp.count > this.settings.registerPerIpPerHour) {
      throw tooMany('Too many registration requests from this address; try again later.', perIp.resetMs);
    }
    const perEmail = await this.store.hit(`register:email:${id}`, 3600);
    if (perEmail.count > this.settings.registerPerEmailPerHour) {
      throw tooMany('Too many codes requested for this e-mail address; try again later.', perEmail.resetMs);
    }
    const code = generateCode();
    await this.store.putCode(id, hashCode(email, code, this.settings.pepper), this.settings.codeTtlSeconds);
    const minutes = Math.round(this.settings.codeTtlSeconds / 60);
    try {
      await this.mailer.send({
        to: email,
        subject: 'Your docproc verification code',
        text: `Your docproc verification code is ${code}\n\nIt is valid for ${minutes} minutes and can be used once.\nIf you did not ask for it, ignore this mail.\n`,
      });
    } catch (err) {
      throw new AppError(503, ErrorCode.MAIL_UNAVAILABLE, 'The verification mail could not be sent; try again shortly.', { cause: err, headers: { 'retry-after': '30' } });
    }
  }

  /**
   * Checks and consumes the code; on success mints a key that is returned once and stored only
   * hashed. Rate-limited per client; tries are counted per address and client, with a global cap.
   */
  async verifyCode(rawEmail: string, code: string, clientIp: string): Promise<string> {
    const email = normalizeEmail(rawEmail);
    const id = emailId(email, this.settings.pepper);
    const perClient = await this.store.hit(`verify:ip:${clientIp}`, 3600);
    if (perClient.count > this.settings.verifyPerIpPerHour) {
      throw tooMany('Too many verification attempts from this address; try again later.', perClient.resetMs);
    }
    const triesByClient = await this.store.hit(`verify:tries:${id}:${clientIp}`, this.settings.codeTtlSeconds);
    if (triesByClient.count > this.settings.codeMaxAttempts) throw invalidCode();
    const result = await this.store.checkCode(id, hashCode(email, code, this.settings.pepper), this.settings.codeMaxAttempts * GLOBAL_ATTEMPTS_FACTOR);
    if (result !== 'ok') throw invalidCode();
    const key = generateApiKey();
    await this.store.putApiKey(hashApiKey(key, this.settings.pepper), { email, createdAt: new Date().toISOString() });
    return key;
  }

  /** Ends the presented key at once, on every replica (they all read the key from the store). */
  async revokeKey(key: string): Promise<void> {
    if (!(await this.store.expireApiKey(hashApiKey(key, this.settings.pepper), 0))) throw new AppError(401, ErrorCode.AUTHENTICATION_ERROR, 'Unknown API key.');
  }

  /**
   * Mints a successor for the presented key (same account) and ends the presented one after the
   * grace period, so deployments can switch over; rotating again never extends an old key's end.
   */
  async rotateKey(key: string): Promise<RotatedKey> {
    const hash = hashApiKey(key, this.settings.pepper);
    const record = await this.store.getApiKey(hash);
    if (!record) throw new AppError(401, ErrorCode.AUTHENTICATION_ERROR, 'Unknown API key.');
    const successor = generateApiKey();
    await this.store.putApiKey(hashApiKey(successor, this.settings.pepper), { email: record.email, createdAt: new Date().toISOString() });
    const grace = this.settings.keyRotationGraceSeconds;
    await this.store.expireApiKey(hash, grace);
    return { key: successor, previousKeyExpiresAt: new Date(Date.now() + grace * 1000).toISOString() };
  }
}
