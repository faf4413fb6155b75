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
}

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

  /** Checks and consumes the code; on success mints a key that is returned once and stored only hashed. */
  async verifyCode(rawEmail: string, code: string): Promise<string> {
    const email = normalizeEmail(rawEmail);
    const id = emailId(email, this.settings.pepper);
    const result = await this.store.checkCode(id, hashCode(email, code, this.settings.pepper), this.settings.codeMaxAttempts);
    switch (result) {
      case 'ok': {
        const key = generateApiKey();
        await this.store.putApiKey(hashApiKey(key, this.settings.pepper), { email, createdAt: new Date().toISOString() });
        return key;
      }
      case 'wrong':
        throw new AppError(401, ErrorCode.INVALID_CODE, 'The verification code is wrong.');
      case 'burnt':
        throw new AppError(401, ErrorCode.INVALID_CODE, 'Too many wrong codes: this code is no longer valid; request a new one.');
      case 'missing':
        throw new AppError(401, ErrorCode.INVALID_CODE, 'No valid code for this address: it expired, was already used, or was never requested.');
    }
  }
}
