import { DomainError, ErrorCode } from '../errors/domain-error.js';
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
  /** Rotations one account (e-mail address) may make per hour (KEY_ROTATIONS_PER_HOUR). */
  keyRotationsPerHour: number;
}

export interface RotatedKey {
  key: string;
  /** When the key that was rotated stops working (ISO 8601). */
  previousKeyExpiresAt: string;
}

/**
 * Each client has codeMaxAttempts wrong tries at an address's codes; all clients together have
 * this many times that. Past it, clients that did not ask for a code for the address may not try
 * any more, while the ones that did (the owner) keep their own tries: strangers can neither burn the
 * owner's code nor lock the owner out, and the guesses at a 6-digit code stay few (50 from
 * strangers, plus codeMaxAttempts from each requester, whose number REGISTER_PER_EMAIL_PER_HOUR bounds).
 */
const ADDRESS_TRIES_FACTOR = 10;

/**
 * One answer for every failure, so nobody learns whether a code is pending for an address. 400, as
 * SuperDoc documents it for /v1/auth/verify (clients generated from its document expect no 401 there).
 */
const invalidCode = () =>
  new DomainError(ErrorCode.INVALID_CODE, 'The verification code is not valid: it is wrong, expired, already used or was never requested. Request a new one if needed.');

const tooMany = (message: string, resetMs: number) =>
  new DomainError(ErrorCode.RATE_LIMIT_ERROR, message, { retryAfterSeconds: resetMs / 1000 });

const unknownKey = () => new DomainError(ErrorCode.AUTHENTICATION_ERROR, 'Unknown API key.');

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
    await this.store.putCode(id, hashCode(email, code, this.settings.pepper), this.settings.codeTtlSeconds, clientIp);
    const minutes = Math.round(this.settings.codeTtlSeconds / 60);
    try {
      await this.mailer.send({
        to: email,
        subject: 'Your docproc verification code',
        text: `Your docproc verification code is ${code}\n\nIt is valid for ${minutes} minutes and can be used once.\nIf you did not ask for it, ignore this mail.\n`,
      });
    } catch (err) {
      throw new DomainError(ErrorCode.MAIL_UNAVAILABLE, 'The verification mail could not be sent; try again shortly.', { cause: err, retryAfterSeconds: 30 });
    }
  }

  /**
   * Checks the code and, on success, consumes the address's codes and mints a key that is returned
   * once and stored only hashed. Rate-limited per client; wrong tries are counted per address and
   * client (see ADDRESS_TRIES_FACTOR).
   */
  async verifyCode(rawEmail: string, code: string, clientIp: string): Promise<string> {
    const email = normalizeEmail(rawEmail);
    const id = emailId(email, this.settings.pepper);
    const perClient = await this.store.hit(`verify:ip:${clientIp}`, 3600);
    if (perClient.count > this.settings.verifyPerIpPerHour) {
      throw tooMany('Too many verification attempts from this address; try again later.', perClient.resetMs);
    }
    const limits = { perClient: this.settings.codeMaxAttempts, perAddress: this.settings.codeMaxAttempts * ADDRESS_TRIES_FACTOR };
    if ((await this.store.checkCode(id, hashCode(email, code, this.settings.pepper), clientIp, limits)) !== 'ok') throw invalidCode();
    const key = generateApiKey();
    await this.store.putApiKey(hashApiKey(key, this.settings.pepper), { email, createdAt: new Date().toISOString() });
    return key;
  }

  /**
   * Ends the presented key at once, on every replica (they all read keys from the store), with its
   * whole lineage: the keys minted from it by rotation and the keys it was minted from that still
   * work in their grace period. A leaked key leaves no live relative behind.
   */
  async revokeKey(key: string): Promise<void> {
    if (!(await this.store.revokeApiKey(hashApiKey(key, this.settings.pepper)))) throw unknownKey();
  }

  /**
   * Mints a successor for the presented key (same account and lineage) and ends the presented one
   * after the grace period, so deployments can switch over. Only an active key rotates: one already
   * rotated (in its grace period) is refused, so a lineage has one active key at a time; and an
   * account rotates at most KEY_ROTATIONS_PER_HOUR times an hour.
   */
  async rotateKey(key: string): Promise<RotatedKey> {
    const hash = hashApiKey(key, this.settings.pepper);
    const record = await this.store.getApiKey(hash);
    if (!record) throw unknownKey();
    const successor = generateApiKey();
    const grace = this.settings.keyRotationGraceSeconds;
    const outcome = await this.store.rotateApiKey(hash, hashApiKey(successor, this.settings.pepper), { email: record.email, createdAt: new Date().toISOString() }, grace, {
      bucket: `rotate:${emailId(record.email, this.settings.pepper)}`,
      max: this.settings.keyRotationsPerHour,
      windowSeconds: 3600,
    });
    switch (outcome.status) {
      case 'rotated':
        return { key: successor, previousKeyExpiresAt: new Date(Date.now() + grace * 1000).toISOString() };
      case 'missing':
        throw unknownKey();
      case 'not-active':
        throw new DomainError(ErrorCode.KEY_NOT_ACTIVE, 'This key has been rotated already and only works until its grace period ends; rotate its successor instead (or revoke it with DELETE /v1/auth/key).');
      case 'rate-limited':
        throw tooMany(`At most ${this.settings.keyRotationsPerHour} key rotations per account per hour.`, outcome.resetMs);
    }
  }
}
