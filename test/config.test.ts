import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('configuration', () => {
  it('has the defaults the README lists', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 4000,
      host: '127.0.0.1',
      databaseUrl: null,
      dataDir: './data',
      adminToken: null,
      checkoutUrl: 'http://127.0.0.1:4000',
      orderTtlSeconds: 1800,
      sessionTtlSeconds: 900,
      webhookRetryScheduleSeconds: [0, 60, 300, 1800, 7200, 21600, 43200, 86400, 86400],
      webhookTimeoutMs: 10_000,
      webhookAllowPrivate: false,
      settlementDelaySeconds: 86_400,
      reconcileIntervalMs: 30_000,
      expiryIntervalMs: 5_000,
      liveRailUrl: null,
      liveRailSecret: null,
      liveRailTimeoutMs: 5_000,
      liveFiscalUrl: null,
      liveFiscalSecret: null,
      vatRates: [0, 12],
      defaultFeeBps: 100,
      sessionRequestsPerMinute: 60,
      addressRequestsPerMinute: 300,
      keyRequestsPerMinute: 6_000,
      requestsInFlightMax: 4_096,
      requestsInFlightPerClientMax: 1_024,
    });
  });

  it('derives the checkout URL from HOST and PORT, and strips a trailing slash from an explicit one', () => {
    expect(loadConfig({ HOST: '0.0.0.0', PORT: '8080' }).checkoutUrl).toBe('http://0.0.0.0:8080');
    expect(loadConfig({ TOLOV_CHECKOUT_URL: 'https://pay.tolov.uz/' }).checkoutUrl).toBe('https://pay.tolov.uz');
  });

  it('reads every variable', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://u@db:5432/tolov',
      TOLOV_DATA_DIR: 'memory://',
      TOLOV_ADMIN_TOKEN: 'a-long-enough-token',
      TOLOV_WEBHOOK_RETRY_SCHEDULE: '0, 5,10',
      TOLOV_WEBHOOK_ALLOW_PRIVATE: 'true',
      TOLOV_LIVE_RAIL_URL: 'http://127.0.0.1:4100',
      TOLOV_LIVE_RAIL_SECRET: 'shh',
      TOLOV_FEE_BPS: '250',
      TOLOV_VAT_RATES: '0, 12,15',
      TOLOV_LIVE_FISCAL_URL: 'https://fiscal.example.uz/gw',
      TOLOV_LIVE_FISCAL_SECRET: 'shh-fiscal',
      TOLOV_REQUESTS_IN_FLIGHT_MAX: '64',
      TOLOV_REQUESTS_IN_FLIGHT_PER_CLIENT_MAX: '16',
    });
    expect(config).toMatchObject({
      databaseUrl: 'postgres://u@db:5432/tolov',
      dataDir: 'memory://',
      adminToken: 'a-long-enough-token',
      webhookRetryScheduleSeconds: [0, 5, 10],
      webhookAllowPrivate: true,
      liveRailUrl: 'http://127.0.0.1:4100',
      liveRailSecret: 'shh',
      defaultFeeBps: 250,
      vatRates: [0, 12, 15],
      liveFiscalUrl: 'https://fiscal.example.uz/gw',
      liveFiscalSecret: 'shh-fiscal',
      requestsInFlightMax: 64,
      requestsInFlightPerClientMax: 16,
    });
  });

  it.each([
    ['PORT', 'abc', 'an integer from 0 to 65535'],
    ['PORT', '70000', 'an integer from 0 to 65535'],
    ['TOLOV_ORDER_TTL_SECONDS', '0', 'an integer from 1'],
    ['TOLOV_ORDER_TTL_SECONDS', '1.5', 'an integer from 1'],
    ['TOLOV_FEE_BPS', '10001', 'an integer from 0 to 10000'],
    ['TOLOV_FEE_BPS', '-1', 'an integer from 0 to 10000'],
    ['DATABASE_URL', 'mysql://x', 'a postgres or postgresql URL'],
    ['DATABASE_URL', 'postgres://u@db1:5432,,db2:5432/tolov', 'or several hosts'],
    ['DATABASE_URL', `postgres://u@${Array.from({ length: 17 }, (_, i) => `db${i}`).join(',')}/tolov`, 'at most 16'],
    ['DATABASE_URL', 'postgres://u@db1:5432,db2:port/tolov', 'a postgres or postgresql URL'],
    ['TOLOV_CHECKOUT_URL', 'ftp://x', 'a http or https URL'],
    ['TOLOV_WEBHOOK_ALLOW_PRIVATE', 'yes', 'true or false'],
    ['TOLOV_WEBHOOK_RETRY_SCHEDULE', '0,1m', 'comma-separated delays in seconds'],
    ['TOLOV_ADMIN_TOKEN', 'short', 'at least 16 characters'],
    ['LOG_LEVEL', 'loud', 'fatal, error'],
    ['TOLOV_RATE_LIMIT_SESSION_PER_MINUTE', '0', 'an integer from 1'],
    ['TOLOV_REQUESTS_IN_FLIGHT_MAX', '0', 'an integer from 1 to 1000000'],
    ['TOLOV_REQUESTS_IN_FLIGHT_PER_CLIENT_MAX', '0', 'an integer from 1 to 1000000'],
    ['TOLOV_VAT_RATES', '12,abc', 'whole percentages from 0 to 100'],
    ['TOLOV_VAT_RATES', '12,101', 'whole percentages from 0 to 100'],
    ['TOLOV_VAT_RATES', '12,12', 'different'],
    ['TOLOV_VAT_RATES', '12.5', 'whole percentages'],
    ['TOLOV_LIVE_FISCAL_URL', 'ftp://x', 'a http or https URL'],
  ])('refuses %s=%s, naming the variable and the accepted form', (variable, value, expected) => {
    let error: unknown;
    try {
      loadConfig({ [variable]: value });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
    expect((error as ConfigError).message).toContain(variable);
    expect((error as ConfigError).message).toContain(expected);
  });

  it('takes a DATABASE_URL listing a primary and its standbys, and never prints the password of one it refuses', () => {
    const hosts = 'postgres://tolov:s3cret@db1.internal:5432,db2.internal:5433,[fd00::3]:5432/tolov?sslmode=require';
    expect(loadConfig({ DATABASE_URL: hosts }).databaseUrl).toBe(hosts);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://tolov:s3cret@db1:5432,/tolov' })).toThrow('postgres://(hidden)@db1:5432,/tolov');
    expect(() => loadConfig({ DATABASE_URL: 'postgres://tolov:s3/cr@t@db1:5432,/tolov' })).toThrow('postgres://(hidden)@db1:5432,/tolov');
  });

  it('never prints the admin token it refuses', () => {
    expect(() => loadConfig({ TOLOV_ADMIN_TOKEN: 'short secret' })).toThrow(/\(hidden\)/);
  });

  it.each([
    ['the documentation\'s example', 'change-me-to-a-long-secret'],
    ['few distinct characters', 'abababababababababababab'],
    ['too little entropy for its length', '1234567890123456'],
  ])('refuses an operator token that is %s, saying how to make one', (_, token) => {
    expect(() => loadConfig({ TOLOV_ADMIN_TOKEN: token })).toThrow(/TOLOV_ADMIN_TOKEN.*openssl rand -base64 32/);
    expect(() => loadConfig({ TOLOV_ADMIN_TOKEN: token })).not.toThrow(new RegExp(token));
  });

  it('needs a mail server in production, and reads where mail comes from', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/TOLOV_SMTP_URL/);
    expect(loadConfig({ NODE_ENV: 'production', TOLOV_SMTP_URL: 'smtps://mailer:pw@smtp.example.uz' })).toMatchObject({ smtpUrl: 'smtps://mailer:pw@smtp.example.uz' });
    // In development the mail goes to the log.
    expect(loadConfig({})).toMatchObject({ smtpUrl: null, mailFrom: 'Tolov <no-reply@127.0.0.1>' });
    expect(loadConfig({ TOLOV_CHECKOUT_URL: 'https://pay.tolov.uz', TOLOV_MAIL_FROM: 'Chorsu Pay <hello@chorsu.uz>' })).toMatchObject({ mailFrom: 'Chorsu Pay <hello@chorsu.uz>' });
    expect(loadConfig({ TOLOV_CHECKOUT_URL: 'https://pay.tolov.uz' })).toMatchObject({ mailFrom: 'Tolov <no-reply@pay.tolov.uz>' });
    expect(() => loadConfig({ TOLOV_SMTP_URL: 'http://smtp.example.uz' })).toThrow(/TOLOV_SMTP_URL/);
    expect(() => loadConfig({ TOLOV_MAIL_FROM: 'a@b.uz\r\nBcc: c@d.uz' })).toThrow(/TOLOV_MAIL_FROM/);
  });

  it('reads the proxies whose X-Forwarded-For it trusts', () => {
    expect(loadConfig({})).toMatchObject({ trustProxy: [] });
    expect(loadConfig({ TOLOV_TRUST_PROXY: '10.0.0.1, 10.1.0.0/16,::1' })).toMatchObject({ trustProxy: ['10.0.0.1', '10.1.0.0/16', '::1'] });
    expect(() => loadConfig({ TOLOV_TRUST_PROXY: 'true' })).toThrow(/TOLOV_TRUST_PROXY/);
  });

  it('needs the fiscal secret whenever the fiscal gateway URL is set', () => {
    expect(() => loadConfig({ TOLOV_LIVE_FISCAL_URL: 'http://127.0.0.1:4100' })).toThrow(/TOLOV_LIVE_FISCAL_SECRET/);
  });

  it('needs the rail secret whenever the live rail URL is set', () => {
    expect(() => loadConfig({ TOLOV_LIVE_RAIL_URL: 'http://127.0.0.1:4100' })).toThrow(/TOLOV_LIVE_RAIL_SECRET/);
  });
});
