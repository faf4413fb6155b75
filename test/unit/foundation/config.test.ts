import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';

/** Everything production needs but the pepper (SIGNING_P12 is opened when the app is built, not here). */
const production = { NODE_ENV: 'production', REDIS_URL: 'redis://redis:6379', SMTP_URL: 'smtp://mail:25', SIGNING_P12: '/run/secrets/signing.p12' };

describe('configuration from the environment', () => {
  it('has embedded defaults that need no Redis or SMTP', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.redisUrl).toBeUndefined();
    expect(config.smtpUrl).toBeUndefined();
    expect(config.limits.maxFileBytes).toBe(25 * 1024 * 1024);
    expect(config.office.convertTimeoutMs).toBe(60_000);
    expect(config.pepperIsDefault).toBe(true);
  });

  it.each([
    ['PORT', 'abc', /PORT must be a whole number/],
    ['PORT', '70000', /PORT must be between/],
    ['REDIS_URL', 'http://x', /REDIS_URL must use redis: or rediss:/],
    ['SMTP_URL', '::::', /SMTP_URL must be a URL/],
    ['API_KEY_PEPPER', 'short', /API_KEY_PEPPER must be at least 16/],
    ['ALLOW_URL_INPUTS', 'maybe', /ALLOW_URL_INPUTS must be true or false/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL must be one of/],
    ['REMOTE_IMAGE_HOSTS', 'good.example.com,bad host', /REMOTE_IMAGE_HOSTS must be a comma-separated list/],
  ])('names the bad variable %s=%s', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it('production refuses to start without a pepper, or with one copied from an example', () => {
    expect(() => loadConfig(production)).toThrow(/API_KEY_PEPPER must be set in production/);
    for (const placeholder of ['change-me-to-a-long-random-secret', 'replace-with-a-long-random-secret', 'docproc-development-pepper-change-me']) {
      expect(() => loadConfig({ ...production, API_KEY_PEPPER: placeholder })).toThrow(/published placeholder/);
      expect(loadConfig({ API_KEY_PEPPER: placeholder }).pepperIsDefault).toBe(true);
    }
    expect(loadConfig({ ...production, API_KEY_PEPPER: 'a-real-random-secret-0123456789' }).pepperIsDefault).toBe(false);
  });

  it('production refuses the development fallbacks: no Redis, no SMTP, no signing identity (unless ALLOW_DEVELOPMENT_SIGNING)', () => {
    const pepper = { API_KEY_PEPPER: 'a-real-random-secret-0123456789' };
    for (const missing of ['REDIS_URL', 'SMTP_URL', 'SIGNING_P12'] as const) {
      const env = { ...production, ...pepper, [missing]: '' };
      expect(() => loadConfig(env)).toThrow(new RegExp(`^Invalid configuration: ${missing} must be set in production`));
      expect(loadConfig({ ...env, NODE_ENV: 'development' }).production).toBe(false);
    }
    const demo = loadConfig({ ...production, ...pepper, SIGNING_P12: '', ALLOW_DEVELOPMENT_SIGNING: 'true' });
    expect(demo.signing).toMatchObject({ p12: undefined, allowDevelopment: true });
    expect(loadConfig({ ...production, ...pepper }).production).toBe(true);
  });
});
