// The test cards of docs/testing.md, defined once: the test rail and the bank simulator issue the same cards with the
// same behaviours.

export type Behaviour =
  | 'succeeds'
  | 'inactive'
  | 'insufficient_funds'
  | 'unclear_then_succeeds'
  | 'unclear_then_fails'
  | 'blocked'
  | 'refund_unclear_then_succeeds';

export const TEST_CARDS: Readonly<Record<string, Behaviour>> = {
  '8600000000000007': 'succeeds',
  '9860000000000000': 'succeeds',
  '8600000000000015': 'insufficient_funds',
  '8600000000000023': 'inactive',
  '8600000000000031': 'unclear_then_succeeds',
  '8600000000000049': 'unclear_then_fails',
  '8600000000000056': 'blocked',
  '8600000000000064': 'refund_unclear_then_succeeds',
};
