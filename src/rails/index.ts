import type { Db } from '../db/db.js';
import { ApiError } from '../http/errors.js';
import type { Rail } from './rail.js';
import { testRail } from './test-rail.js';

/** The rail of each mode: the test rail for test mode; live mode has none until a bank gateway is connected. */
export interface Rails {
  forMode(livemode: boolean): Rail;
}

export function createRails(db: Db): Rails {
  const test = testRail(db);
  return {
    forMode(livemode) {
      if (!livemode) return test;
      throw new ApiError('RAIL_UNAVAILABLE', 'Live mode has no bank rail configured yet; use a test key');
    },
  };
}
