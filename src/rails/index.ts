import type { Db } from '../db/types.js';
import { ApiError } from '../core/errors.js';
import { HttpFiscal } from './http-fiscal.js';
import { HttpRail } from './http-rail.js';
import type { Rail } from './rail.js';
import { TestRail } from './test-rail.js';
import type { FiscalModule } from './fiscal.js';
import { TestFiscalModule } from './test-fiscal.js';
import { NO_TIMINGS, type Recorder } from '../lib/timings.js';

/** The rail of each mode: the test rail for test mode; the bank gateway at TOLOV_LIVE_RAIL_URL for live mode. */
export interface Rails {
  forMode(livemode: boolean): Rail;
}

export function createRails(
  db: Db,
  live: { liveRailUrl: string | null; liveRailSecret: string | null; liveRailTimeoutMs: number },
  timings: Recorder = NO_TIMINGS,
): Rails {
  const test = new TestRail(db, timings);
  const gateway =
    live.liveRailUrl && live.liveRailSecret ? new HttpRail({ url: live.liveRailUrl, secret: live.liveRailSecret, timeoutMs: live.liveRailTimeoutMs }) : null;
  return {
    forMode(livemode) {
      if (!livemode) return test;
      if (gateway) return gateway;
      throw new ApiError('RAIL_UNAVAILABLE', 'Live mode has no bank gateway configured (TOLOV_LIVE_RAIL_URL); use a test key');
    },
  };
}

/** The fiscal module of each mode; null for live mode when no fiscal gateway is configured. */
export interface FiscalModules {
  forMode(livemode: boolean): FiscalModule | null;
}

/**
 * The test module for test mode; the fiscal gateway at TOLOV_LIVE_FISCAL_URL for live mode, with the bank gateway's
 * timeout (the same transport rules), or none: live receipts then fail FISCAL_UNAVAILABLE once their schedule is spent.
 */
export function createFiscalModules(
  db: Db,
  live: { liveFiscalUrl: string | null; liveFiscalSecret: string | null; liveRailTimeoutMs: number },
): FiscalModules {
  const test = new TestFiscalModule(db);
  const gateway =
    live.liveFiscalUrl && live.liveFiscalSecret ? new HttpFiscal({ url: live.liveFiscalUrl, secret: live.liveFiscalSecret, timeoutMs: live.liveRailTimeoutMs }) : null;
  return { forMode: (livemode) => (livemode ? gateway : test) };
}
