import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';

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
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/API_KEY_PEPPER must be set in production/);
    for (const placeholder of ['change-me-to-a-long-random-secret', 'replace-with-a-long-random-secret', 'docproc-development-pepper-change-me']) {
      expect(() => loadConfig({ NODE_ENV: 'production', API_KEY_PEPPER: placeholder })).toThrow(/published placeholder/);
      expect(loadConfig({ API_KEY_PEPPER: placeholder }).pepperIsDefault).toBe(true);
    }
    expect(loadConfig({ NODE_ENV: 'production', API_KEY_PEPPER: 'a-real-random-secret-0123456789' }).pepperIsDefault).toBe(false);
  });
});
