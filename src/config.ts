// Every setting (the TOLOV_* variables, PORT, HOST, DATABASE_URL, LOG_LEVEL), parsed and validated once at start. A
// bad value stops the start with a message naming the variable and the form it accepts.
import { DATABASE_HOSTS_MAX, databaseHosts } from './lib/database-url.js';
import { parseSealingKey } from './lib/sealing.js';

export interface Config {
  port: number;
  host: string;
  /** postgres://… of a PostgreSQL server, or of several (a primary and its standbys); null selects the embedded engine in `dataDir`. */
  databaseUrl: string | null;
  /** Folder of the embedded database, or `memory://`. */
  dataDir: string;
  /** Null disables the operator API (every /admin/ call answers 404). */
  adminToken: string | null;
  /**
   * How long a graceful stop keeps serving while /readyz already answers 503, so that a load balancer stops sending
   * requests before the listener closes (0: it closes at once).
   */
  shutdownDrainMs: number;
  /**
   * How long after SIGTERM the process may take to stop, the drain included; past it, it exits with code 1 and names
   * what was still running.
   */
  shutdownTimeoutMs: number;
  /** Null hides GET /metrics (404); Prometheus sends it as a bearer token. */
  metricsToken: string | null;
  checkoutUrl: string;
  orderTtlSeconds: number;
  sessionTtlSeconds: number;
  /** Delay in seconds before each delivery attempt; its length is the attempt count. */
  webhookRetryScheduleSeconds: number[];
  webhookTimeoutMs: number;
  webhookAllowPrivate: boolean;
  settlementDelaySeconds: number;
  reconcileIntervalMs: number;
  expiryIntervalMs: number;
  /** How long a two-step payment's hold waits for its capture before the worker releases it (TOLOV_HOLD_DAYS). */
  holdDays: number;
  liveRailUrl: string | null;
  liveRailSecret: string | null;
  /** How long the bank gateway (and the fiscal gateway) has to answer one call. */
  liveRailTimeoutMs: number;
  /** The fiscal gateway that registers live receipts; without it they fail (FISCAL_UNAVAILABLE) once the retry schedule is used up. */
  liveFiscalUrl: string | null;
  liveFiscalSecret: string | null;
  /** When the daily automatic payouts run: minutes after midnight, Tashkent time (TOLOV_PAYOUT_TIME, HH:MM). */
  payoutTimeMinutes: number;
  /** The smallest automatic payout, in tiyin: a smaller available balance waits for the next day. */
  payoutMin: number;
  /** The VAT rates, in percent, a receipt line may name. */
  vatRates: number[];
  /**
   * Proxies whose X-Forwarded-For names the client (their addresses or CIDR ranges): behind one, the client address
   * that every throttle counts is the one it reports. Empty: the connection's own address.
   */
  trustProxy: string[];
  /** smtp:// or smtps:// of the server that sends accounts' mail; null writes mail to the log (never in production). */
  smtpUrl: string | null;
  /** The From of that mail. */
  mailFrom: string;
  defaultFeeBps: number;
  /** Public card-capture calls allowed per session token, and per client address, each minute. */
  sessionRequestsPerMinute: number;
  addressRequestsPerMinute: number;
  /** Merchant API calls allowed per API key each minute. */
  keyRequestsPerMinute: number;
  authFailuresPerMinute: number;
  /** Requests answered at once; past it a request answers 503 at once. */
  requestsInFlightMax: number;
  /** Of those, one product's (or, before a key, one client address's); past it its request answers 429 at once. */
  requestsInFlightPerClientMax: number;
  webhookEndpointsMax: number;
  /**
   * Seals the secrets the service reads back (AES-256-GCM). Null on the embedded engine without TOLOV_SECRETS_KEY: a
   * key is then made in a file beside the data folder.
   */
  secretsKey: Buffer | null;
  /** Keys that sealed values before a rotation: they still open, and those values are sealed again at start. */
  previousSecretsKeys: Buffer[];
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

export class ConfigError extends Error {
  constructor(readonly variable: string, expected: string, value: string) {
    super(`${variable}=${JSON.stringify(value)} is invalid: expected ${expected}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const DAY_SECONDS = 86_400;
const WEBHOOK_ATTEMPTS_MAX = 20;
const ADMIN_TOKEN_LENGTH_MIN = 16;
/** An operator token guessable in fewer tries than 2^this is refused (a random 16-character base64 string has 96). */
const ADMIN_TOKEN_BITS_MIN = 80;
const ADMIN_TOKEN_DISTINCT_MIN = 10;
/** Tokens printed in Tolov's own documentation: whoever read it knows them. */
const DOCUMENTED_TOKENS = new Set(['change-me-to-a-long-secret']);
const MAKE_A_TOKEN = 'make one with: openssl rand -base64 32';

/**
 * What a token's characters allow at most, as if each were drawn at random from the classes it uses (lower case, upper
 * case, digits, others): an upper bound on its entropy, enough to refuse the weak ones.
 */
function tokenBits(token: string): number {
  const classes: Array<[RegExp, number]> = [[/[a-z]/, 26], [/[A-Z]/, 26], [/[0-9]/, 10], [/[^a-zA-Z0-9]/, 32]];
  const alphabet = classes.reduce((size, [pattern, count]) => size + (pattern.test(token) ? count : 0), 0);
  return token.length * Math.log2(Math.max(alphabet, 2));
}

function checkAdminToken(token: string, variable = 'TOLOV_ADMIN_TOKEN'): void {
  if (token.length < ADMIN_TOKEN_LENGTH_MIN || /\s/.test(token)) {
    throw new ConfigError(variable, `at least ${ADMIN_TOKEN_LENGTH_MIN} characters without spaces; ${MAKE_A_TOKEN}`, '(hidden)');
  }
  if (DOCUMENTED_TOKENS.has(token)) {
    throw new ConfigError(variable, `a secret of your own, not the documentation's example; ${MAKE_A_TOKEN}`, '(hidden)');
  }
  if (new Set(token).size < ADMIN_TOKEN_DISTINCT_MIN || tokenBits(token) < ADMIN_TOKEN_BITS_MIN) {
    throw new ConfigError(variable, `a token too random to guess (${ADMIN_TOKEN_BITS_MIN} bits or more); ${MAKE_A_TOKEN}`, '(hidden)');
  }
}
export const SECRETS_KEY_EXPECTED = 'a base64 key of 32 bytes; make one with: openssl rand -base64 32';

/** The sealing keys (the service requires one with a PostgreSQL server, whose processes must all share it). */
function secretsKeys({ read }: EnvReader): Pick<Config, 'secretsKey' | 'previousSecretsKeys'> {
  const expected = SECRETS_KEY_EXPECTED;
  const raw = read('TOLOV_SECRETS_KEY');
  const secretsKey = raw === undefined ? null : parseSealingKey(raw);
  if (raw !== undefined && secretsKey === null) throw new ConfigError('TOLOV_SECRETS_KEY', expected, '(hidden)');
  const previous = (read('TOLOV_SECRETS_KEY_PREVIOUS') ?? '').split(',').filter((part) => part.trim() !== '');
  const previousSecretsKeys = previous.map((part) => parseSealingKey(part));
  if (previousSecretsKeys.some((key) => key === null)) throw new ConfigError('TOLOV_SECRETS_KEY_PREVIOUS', `comma-separated keys, each ${expected}`, '(hidden)');
  return { secretsKey, previousSecretsKeys: previousSecretsKeys as Buffer[] };
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Reads variables of `env`, each checked against what it must be; an empty value counts as unset. */
function envReader(env: Env) {
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value === '' ? undefined : value;
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      throw new ConfigError(name, `an integer from ${min} to ${max}`, raw);
    }
    return value;
  };
  const url = (name: string, protocols: string[]): string | undefined => {
    const raw = read(name);
    if (raw === undefined) return undefined;
    let parsed: URL | null = null;
    try {
      parsed = new URL(raw);
    } catch {
      // refused below, with what it must be
    }
    if (parsed === null || !protocols.includes(parsed.protocol.slice(0, -1))) {
      throw new ConfigError(name, `a ${protocols.join(' or ')} URL`, raw);
    }
    return raw;
  };
  const oneOf = <T extends string>(name: string, values: readonly T[], fallback: T): T => {
    const raw = read(name) ?? fallback;
    const named = values.length === 2 ? values.join(' or ') : values.join(', ');
    if (!(values as readonly string[]).includes(raw)) throw new ConfigError(name, named, raw);
    return raw as T;
  };
  return { read, integer, url, oneOf };
}
type EnvReader = ReturnType<typeof envReader>;

function webhookRetrySchedule({ read }: EnvReader): number[] {
  const raw = read('TOLOV_WEBHOOK_RETRY_SCHEDULE') ?? '0,60,300,1800,7200,21600,43200,86400,86400';
  const schedule = raw.split(',').map((part) => (/^\d+$/.test(part.trim()) ? Number(part.trim()) : NaN));
  if (schedule.length > WEBHOOK_ATTEMPTS_MAX || schedule.some((s) => !Number.isSafeInteger(s) || s > 7 * DAY_SECONDS)) {
    throw new ConfigError('TOLOV_WEBHOOK_RETRY_SCHEDULE', `1 to ${WEBHOOK_ATTEMPTS_MAX} comma-separated delays in seconds, each at most ${7 * DAY_SECONDS}`, raw);
  }
  return schedule;
}

/** Where the service listens, and the public address of its pages (the same unless it is behind a proxy). */
function addresses({ read, integer, url }: EnvReader): Pick<Config, 'port' | 'host' | 'checkoutUrl'> {
  const port = integer('PORT', 4000, 0, 65_535);
  const host = read('HOST') ?? '127.0.0.1';
  if (!/^[A-Za-z0-9.:\-[\]]+$/.test(host)) throw new ConfigError('HOST', 'a host name or IP address', host);
  const checkoutUrl = (url('TOLOV_CHECKOUT_URL', ['http', 'https']) ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  return { port, host, checkoutUrl };
}

function liveRail({ read, url, integer }: EnvReader): Pick<Config, 'liveRailUrl' | 'liveRailSecret' | 'liveRailTimeoutMs'> {
  const liveRailUrl = url('TOLOV_LIVE_RAIL_URL', ['http', 'https']) ?? null;
  const liveRailSecret = read('TOLOV_LIVE_RAIL_SECRET') ?? null;
  if (liveRailUrl !== null && liveRailSecret === null) {
    throw new ConfigError('TOLOV_LIVE_RAIL_SECRET', 'a shared secret whenever TOLOV_LIVE_RAIL_URL is set', '');
  }
  return { liveRailUrl, liveRailSecret, liveRailTimeoutMs: integer('TOLOV_LIVE_RAIL_TIMEOUT_MS', 5_000, 100, 60_000) };
}

function liveFiscal({ read, url }: EnvReader): Pick<Config, 'liveFiscalUrl' | 'liveFiscalSecret'> {
  const liveFiscalUrl = url('TOLOV_LIVE_FISCAL_URL', ['http', 'https']) ?? null;
  const liveFiscalSecret = read('TOLOV_LIVE_FISCAL_SECRET') ?? null;
  if (liveFiscalUrl !== null && liveFiscalSecret === null) {
    throw new ConfigError('TOLOV_LIVE_FISCAL_SECRET', 'a shared secret whenever TOLOV_LIVE_FISCAL_URL is set', '');
  }
  return { liveFiscalUrl, liveFiscalSecret };
}

/** TOLOV_PAYOUT_TIME (HH:MM, 24-hour, Tashkent time) as minutes after midnight, and TOLOV_PAYOUT_MIN in tiyin. */
function payouts({ read, integer }: EnvReader): Pick<Config, 'payoutTimeMinutes' | 'payoutMin'> {
  const raw = read('TOLOV_PAYOUT_TIME') ?? '10:00';
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(raw);
  if (!match) throw new ConfigError('TOLOV_PAYOUT_TIME', 'a time of day HH:MM (00:00 to 23:59), Tashkent time', raw);
  return { payoutTimeMinutes: Number(match[1]) * 60 + Number(match[2]), payoutMin: integer('TOLOV_PAYOUT_MIN', 1_000_000, 1, 1_000_000_000_000) };
}

const VAT_RATES_MAX = 10;

function vatRates({ read }: EnvReader): number[] {
  const raw = read('TOLOV_VAT_RATES') ?? '0,12';
  const rates = raw.split(',').map((part) => (/^\d{1,3}$/.test(part.trim()) ? Number(part.trim()) : NaN));
  if (rates.length > VAT_RATES_MAX || rates.some((rate) => !(rate >= 0 && rate <= 100)) || new Set(rates).size !== rates.length) {
    throw new ConfigError('TOLOV_VAT_RATES', `1 to ${VAT_RATES_MAX} different comma-separated whole percentages from 0 to 100`, raw);
  }
  return rates;
}

/**
 * Where accounts' mail goes. Sign-up and reset links are the only way into an account, so a production service
 * (NODE_ENV=production) refuses to start without a mail server: without one, mail is written to the log, links
 * included, which only a developer's own machine may do.
 */
function mail({ read, url }: EnvReader, checkoutUrl: string): Pick<Config, 'smtpUrl' | 'mailFrom'> {
  const smtpUrl = url('TOLOV_SMTP_URL', ['smtp', 'smtps']) ?? null;
  if (smtpUrl === null && read('NODE_ENV') === 'production') {
    throw new ConfigError('TOLOV_SMTP_URL', "an smtp:// or smtps:// URL in production (NODE_ENV=production): accounts' sign-up and password-reset mail", '');
  }
  const mailFrom = read('TOLOV_MAIL_FROM') ?? `Tolov <no-reply@${new URL(checkoutUrl).hostname}>`;
  if (mailFrom.length > 200 || /[\r\n]/.test(mailFrom)) throw new ConfigError('TOLOV_MAIL_FROM', 'one line of at most 200 characters', mailFrom);
  return { smtpUrl, mailFrom };
}

function proxies({ read }: EnvReader): string[] {
  const raw = read('TOLOV_TRUST_PROXY');
  if (raw === undefined) return [];
  const entries = raw.split(',').map((entry) => entry.trim());
  if (entries.some((entry) => !/^[0-9A-Fa-f.:]+(\/\d{1,3})?$/.test(entry))) {
    throw new ConfigError('TOLOV_TRUST_PROXY', 'comma-separated IP addresses or CIDR ranges of the proxies in front of Tolov', raw);
  }
  return entries;
}

function limits({ integer }: EnvReader) {
  return {
    defaultFeeBps: integer('TOLOV_FEE_BPS', 100, 0, 10_000),
    sessionRequestsPerMinute: integer('TOLOV_RATE_LIMIT_SESSION_PER_MINUTE', 60, 1, 1_000_000),
    addressRequestsPerMinute: integer('TOLOV_RATE_LIMIT_ADDRESS_PER_MINUTE', 300, 1, 1_000_000),
    keyRequestsPerMinute: integer('TOLOV_RATE_LIMIT_KEY_PER_MINUTE', 6_000, 1, 10_000_000),
    authFailuresPerMinute: integer('TOLOV_RATE_LIMIT_AUTH_FAILURES_PER_MINUTE', 20, 1, 1_000_000),
    requestsInFlightMax: integer('TOLOV_REQUESTS_IN_FLIGHT_MAX', 4_096, 1, 1_000_000),
    requestsInFlightPerClientMax: integer('TOLOV_REQUESTS_IN_FLIGHT_PER_CLIENT_MAX', 1_024, 1, 1_000_000),
  };
}

function isPostgresUrl(text: string): boolean {
  try {
    return /^postgres(ql)?:$/i.test(new URL(text).protocol);
  } catch {
    return false;
  }
}

/** DATABASE_URL: one PostgreSQL URL, or several hosts in libpq's form, each of which must make a URL. */
function databaseUrl({ read }: EnvReader): string | null {
  const raw = read('DATABASE_URL');
  if (raw === undefined) return null;
  const hosts = databaseHosts(raw);
  if (hosts === null || !hosts.every(isPostgresUrl)) {
    const expected = `a postgres or postgresql URL, or several hosts (postgres://user@db1:5432,db2:5432/tolov, at most ${DATABASE_HOSTS_MAX})`;
    // The user part may hold the password: never printed.
    throw new ConfigError('DATABASE_URL', expected, raw.replace(/\/\/.*@/s, '//(hidden)@'));
  }
  return raw;
}

/** The drain and the whole stop's limit, both counted from SIGTERM: the limit must leave time after the drain. */
function shutdown({ integer }: EnvReader): Pick<Config, 'shutdownDrainMs' | 'shutdownTimeoutMs'> {
  const shutdownDrainMs = integer('TOLOV_SHUTDOWN_DRAIN_MS', 0, 0, 120_000);
  const shutdownTimeoutMs = integer('TOLOV_SHUTDOWN_TIMEOUT_MS', 30_000, 1_000, 600_000);
  if (shutdownTimeoutMs <= shutdownDrainMs) {
    throw new ConfigError('TOLOV_SHUTDOWN_TIMEOUT_MS', `more than TOLOV_SHUTDOWN_DRAIN_MS (${shutdownDrainMs}): both count from SIGTERM`, String(shutdownTimeoutMs));
  }
  return { shutdownDrainMs, shutdownTimeoutMs };
}

export function loadConfig(env: Env = process.env): Config {
  const reader = envReader(env);
  const { read, integer, oneOf } = reader;
  const adminToken = read('TOLOV_ADMIN_TOKEN') ?? null;
  if (adminToken !== null) checkAdminToken(adminToken);
  const metricsToken = read('TOLOV_METRICS_TOKEN') ?? null;
  if (metricsToken !== null) checkAdminToken(metricsToken, 'TOLOV_METRICS_TOKEN');
  const where = addresses(reader);
  return {
    ...where,
    databaseUrl: databaseUrl(reader),
    dataDir: read('TOLOV_DATA_DIR') ?? './data',
    adminToken,
    metricsToken,
    ...shutdown(reader),
    orderTtlSeconds: integer('TOLOV_ORDER_TTL_SECONDS', 1800, 1, 30 * DAY_SECONDS),
    sessionTtlSeconds: integer('TOLOV_SESSION_TTL_SECONDS', 900, 1, DAY_SECONDS),
    webhookRetryScheduleSeconds: webhookRetrySchedule(reader),
    webhookTimeoutMs: integer('TOLOV_WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    webhookAllowPrivate: oneOf('TOLOV_WEBHOOK_ALLOW_PRIVATE', ['true', 'false'], 'false') === 'true',
    webhookEndpointsMax: integer('TOLOV_WEBHOOK_ENDPOINTS_MAX', 16, 1, 1_000),
    settlementDelaySeconds: integer('TOLOV_SETTLEMENT_DELAY_SECONDS', DAY_SECONDS, 0, 90 * DAY_SECONDS),
    reconcileIntervalMs: integer('TOLOV_RECONCILE_INTERVAL_MS', 30_000, 10, DAY_SECONDS * 1000),
    expiryIntervalMs: integer('TOLOV_EXPIRY_INTERVAL_MS', 5_000, 10, DAY_SECONDS * 1000),
    holdDays: integer('TOLOV_HOLD_DAYS', 7, 1, 30),
    ...liveRail(reader),
    ...liveFiscal(reader),
    vatRates: vatRates(reader),
    ...payouts(reader),
    ...mail(reader, where.checkoutUrl),
    trustProxy: proxies(reader),
    ...limits(reader),
    ...secretsKeys(reader),
    logLevel: oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
  };
}
