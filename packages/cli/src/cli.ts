#!/usr/bin/env node
// The `tolov` command: forwards the key's events live to a local URL, causes any event Tolov sends in test mode,
// lists and resends events, follows the request log, and makes and manages payment links. Configured by
// TOLOV_API_KEY and TOLOV_API_BASE, or --api-key and --api-base; no browser log-in.
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import Tolov, { TolovConnectionError, TolovError, type Event } from '@tolov/node';
import { listen, listenSecret } from './listen.js';
import { tailLogs } from './logs.js';
import { paymentLinks } from './payment-links.js';
import { SetupNeeded, triggerPayout } from './payouts.js';
import { UsageError } from './usage.js';

const USAGE = `Usage: tolov <command> [options]

Commands:
  listen --forward-to <url> [--events T1,T2]
                                    forward the key's events as they happen to a local URL, signed with a
                                    secret that stays the same for the key; resumes after a lost connection
  listen --print-secret             print that signing secret and exit (for CI)
  trigger <event type>              cause the event in test mode: order.paid, order.failed, order.expired,
                                    payment_intent.succeeded, payment_intent.failed,
                                    payment_intent.requires_capture (a saved card's amount held),
                                    payment_intent.hold_released (a hold released as its expiry would),
                                    receipt.fiscalized (an order paid with fiscal lines), receipt.failed
                                    (lines the test fiscal module refuses), payout.paid, payout.failed
                                    (the day's payout made now, to the test payout account set in the
                                    dashboard; one ending 0002 fails)
  events list [--type T] [--limit N] the latest events, newest first
  events resend <evt_…> --endpoint <we_…>
                                    deliver an event again to an endpoint
  logs tail                         the product's API calls in the key's mode, as they are made
  payment_links create --description TEXT (--amount TIYIN | [--amount-min TIYIN] [--amount-max TIYIN])
                [--quantity-max N] [--receipt JSON] [--active false]
                                    make a payment link: a fixed amount (with each order's fiscal lines,
                                    as JSON), or one the buyer enters within the bounds; prints its address
  payment_links list [--active true|false] [--limit N]
                                    the latest payment links, newest first
  payment_links get <plink_…>       one payment link
  payment_links update <plink_…> [--active true|false] [--description TEXT]
                                    turn a link off (it opens no more orders) or on again, or describe it

Options:
  --api-key KEY     a secret key (default: TOLOV_API_KEY)
  --api-base URL    where Tolov is (default: TOLOV_API_BASE, else http://127.0.0.1:4000)
  --json            print JSON, for scripts
  -h, --help        this help
  -v, --version     the version`;

const VERSION = '0.1.0';
const SUCCEEDS = '8600000000000007';
const DECLINED = '8600000000000015';
const ORDER_AMOUNT = 1_500_000;
const CHARGE_AMOUNT = 990_000;
/** An item code the test fiscal module signs (any 17 digits but zeros), and the one it refuses (INVALID_CODE). */
const SIGNED_CODE = '10399001001000000';
const REFUSED_CODE = '00000000000000000';
/** Uzbekistan's standard VAT rate, one of Tolov's default rates. */
const VAT_PERCENT = 12;
/** How long trigger waits for an event a worker writes later (a receipt's, once the fiscal module answered it). */
const EVENT_WAIT_MS = 10_000;
const EVENT_POLL_MS = 250;
/** How often a long-running command started by npm checks that its parent is still the one that started it. */
const PARENT_CHECK_MS = 500;

type EventType = NonNullable<NonNullable<Parameters<Tolov['events']['list']>[0]>['type']>;
type Options = { json: boolean; type?: string; limit?: string; endpoint?: string; forwardTo?: string; events?: string; printSecret: boolean };

/** What `trigger` does for each type: the objects it makes, and the one the event is about. */
const TRIGGERS: Record<string, (tolov: Tolov) => Promise<string>> = {
  'order.paid': async (tolov) => (await paidOrder(tolov, ORDER_AMOUNT)).id,
  'order.failed': async (tolov) => (await tolov.testHelpers.orders.pay((await newOrder(tolov)).id, { card: DECLINED })).id,
  'order.expired': async (tolov) => (await tolov.testHelpers.orders.expire((await newOrder(tolov)).id)).id,
  'payment_intent.succeeded': async (tolov) => (await charge(tolov, SUCCEEDS)).id,
  'payment_intent.failed': async (tolov) => (await charge(tolov, DECLINED)).id,
  'payment_intent.requires_capture': async (tolov) => (await charge(tolov, SUCCEEDS, 'manual')).id,
  'payment_intent.hold_released': async (tolov) => (await tolov.testHelpers.charges.expireHold((await charge(tolov, SUCCEEDS, 'manual')).id)).id,
  'receipt.fiscalized': (tolov) => paidReceipt(tolov, SIGNED_CODE),
  'receipt.failed': (tolov) => paidReceipt(tolov, REFUSED_CODE),
  'payout.paid': (tolov) => triggerPayout(tolov, 'PAID', (amount) => paidOrder(tolov, amount)),
  'payout.failed': (tolov) => triggerPayout(tolov, 'FAILED', (amount) => paidOrder(tolov, amount)),
};

const newOrder = (tolov: Tolov, amount = ORDER_AMOUNT) => tolov.orders.create({ amount, description: 'Made by tolov trigger' });
const paidOrder = async (tolov: Tolov, amount: number) => tolov.testHelpers.orders.pay((await newOrder(tolov, amount)).id, { card: SUCCEEDS });

/** An order with one fiscal line of item `code`, paid: its sale receipt, which the fiscalization worker registers. */
async function paidReceipt(tolov: Tolov, code: string): Promise<string> {
  const item = { title: 'Made by tolov trigger', price: ORDER_AMOUNT, count: 1, code, packageCode: '1', vatPercent: VAT_PERCENT };
  const order = await tolov.orders.create({ amount: ORDER_AMOUNT, description: 'Made by tolov trigger', receipt: { items: [item] } });
  const paid = await tolov.testHelpers.orders.pay(order.id, { card: SUCCEEDS });
  if (paid.receipt === null) throw new Error(`${order.id} was paid, but it has no receipt`);
  return paid.receipt;
}

/** A card saved and charged: the amount taken at once, or (`manual`) held until captured or released. */
async function charge(tolov: Tolov, card: string, capture: 'automatic' | 'manual' = 'automatic') {
  const binding = await tolov.cardBindings.create({ customerRef: 'tolov-trigger' });
  const saved = await tolov.testHelpers.cardBindings.complete(binding.id, { card });
  return tolov.charges.create({ amount: CHARGE_AMOUNT, card: saved.card!, capture, description: 'Made by tolov trigger' });
}

/**
 * The event of `type` about `objectId`: written with the change that made the object, or, for a receipt, by the
 * fiscalization worker within about a second; undefined if none came within EVENT_WAIT_MS.
 */
async function eventAbout(tolov: Tolov, type: string, objectId: string): Promise<Event | undefined> {
  const deadline = Date.now() + EVENT_WAIT_MS;
  for (;;) {
    const events = await tolov.events.list({ objectId, limit: 10 });
    const found = events.data.find((event) => event.type === type);
    if (found !== undefined || Date.now() >= deadline) return found;
    await sleep(EVENT_POLL_MS);
  }
}

async function trigger(tolov: Tolov, type: string | undefined, options: Options, key: string): Promise<void> {
  const make = type === undefined ? undefined : TRIGGERS[type];
  if (make === undefined) throw new UsageError(`tolov trigger takes one of: ${Object.keys(TRIGGERS).join(', ')}`);
  if (!key.startsWith('sk_test_')) throw new UsageError('tolov trigger works in test mode only: use a test key (sk_test_…)');
  const objectId = await make(tolov);
  const event = await eventAbout(tolov, type!, objectId);
  if (!event) throw new Error(`${objectId} was made, but no ${type} event about it came within ${EVENT_WAIT_MS / 1000} s`);
  print(options, { event: event.id, type: event.type, object: objectId }, `${event.type} ${event.id} (about ${objectId})`);
}

async function events(tolov: Tolov, [action, eventId]: string[], options: Options): Promise<void> {
  if (action === 'list') {
    const limit = options.limit === undefined ? 10 : Number(options.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError('--limit takes a whole number from 1 to 100');
    // The service checks the type: one it does not know is refused, naming `type`.
    const list = await tolov.events.list({ limit, ...(options.type ? { type: options.type as EventType } : {}) });
    print(options, list.data, list.data.map((event) => `${event.created}  ${event.id}  ${event.type}`).join('\n') || 'no events');
    return;
  }
  if (action === 'resend' && eventId !== undefined && options.endpoint !== undefined) {
    const delivery = await tolov.events.resend(eventId, { endpoint: options.endpoint });
    print(options, delivery, `${delivery.id}: ${delivery.eventType} ${delivery.event} to ${delivery.endpoint}, ${delivery.status}`);
    return;
  }
  throw new UsageError('tolov events list [--type T] [--limit N] | tolov events resend <evt_…> --endpoint <we_…>');
}

/**
 * A signal that aborts at Ctrl-C (or a stop from the system): long-running commands end cleanly, with status 0.
 * Started by npx or an npm script, this process is the child of npm's `sh -c`, and npm passes a stop (SIGTERM) to that
 * shell only: the shell dies and this process is adopted by another. So there, a new parent is a stop too (started
 * otherwise, with nohup say, it may outlive its parent on purpose).
 */
function untilInterrupted(): AbortSignal {
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  if (process.env.npm_lifecycle_event !== undefined) {
    const parent = process.ppid;
    const watch = setInterval(() => process.ppid !== parent && stop.abort(), PARENT_CHECK_MS).unref();
    stop.signal.addEventListener('abort', () => clearInterval(watch), { once: true });
  }
  return stop.signal;
}

async function listenCommand(tolov: Tolov, key: string, options: Options): Promise<void> {
  if (options.printSecret) return print(options, { secret: listenSecret(key) }, listenSecret(key));
  if (options.forwardTo === undefined || !/^https?:\/\//.test(options.forwardTo)) {
    throw new UsageError('tolov listen --forward-to http://localhost:3000/webhooks [--events order.paid,…] | tolov listen --print-secret');
  }
  const types = options.events?.split(',').map((type) => type.trim()).filter((type) => type !== '');
  await listen(tolov, key, { forwardTo: options.forwardTo, json: options.json, signal: untilInterrupted(), ...(types?.length ? { types } : {}) });
}

async function logs(tolov: Tolov, [action]: string[], options: Options): Promise<void> {
  if (action !== 'tail') throw new UsageError('tolov logs tail [--json]');
  await tailLogs(tolov, { json: options.json, signal: untilInterrupted() });
}

function print(options: Options, value: unknown, text: string): void {
  process.stdout.write(`${options.json ? JSON.stringify(value) : text}\n`);
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'api-key': { type: 'string' },
      'api-base': { type: 'string' },
      json: { type: 'boolean', default: false },
      type: { type: 'string' },
      limit: { type: 'string' },
      endpoint: { type: 'string' },
      'forward-to': { type: 'string' },
      events: { type: 'string' },
      'print-secret': { type: 'boolean', default: false },
      description: { type: 'string' },
      amount: { type: 'string' },
      'amount-min': { type: 'string' },
      'amount-max': { type: 'string' },
      'quantity-max': { type: 'string' },
      receipt: { type: 'string' },
      active: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
      version: { type: 'boolean', short: 'v', default: false },
    },
  });
  if (values.version) return (process.stdout.write(`${VERSION}\n`), 0);
  if (values.help || positionals.length === 0) return (process.stdout.write(`${USAGE}\n`), values.help ? 0 : 2);
  const key = values['api-key'] ?? process.env.TOLOV_API_KEY;
  if (!key) throw new UsageError('no API key: set TOLOV_API_KEY or pass --api-key sk_test_…');
  const tolov = new Tolov(key, { baseUrl: values['api-base'] ?? process.env.TOLOV_API_BASE ?? 'http://127.0.0.1:4000' });
  const options: Options = {
    json: values.json,
    printSecret: values['print-secret'],
    ...(values.type ? { type: values.type } : {}),
    ...(values.limit ? { limit: values.limit } : {}),
    ...(values.endpoint ? { endpoint: values.endpoint } : {}),
    ...(values['forward-to'] ? { forwardTo: values['forward-to'] } : {}),
    ...(values.events ? { events: values.events } : {}),
  };
  const [command, ...rest] = positionals;
  if (command === 'listen') await listenCommand(tolov, key, options);
  else if (command === 'trigger') await trigger(tolov, rest[0], options, key);
  else if (command === 'events') await events(tolov, rest, options);
  else if (command === 'logs') await logs(tolov, rest, options);
  else if (command === 'payment_links') await paymentLinks(tolov, rest, values);
  else throw new UsageError(`unknown command ${command}\n\n${USAGE}`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError || error instanceof TypeError || error instanceof SetupNeeded) process.stderr.write(`tolov: ${error.message}\n`);
    else if (error instanceof TolovError) process.stderr.write(`tolov: ${error.code}: ${error.message} (${error.requestId})\n`);
    else if (error instanceof TolovConnectionError) process.stderr.write(`tolov: ${error.message}\n`);
    else process.stderr.write(`tolov: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(error instanceof UsageError || error instanceof TypeError ? 2 : 1);
  },
);
