import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { constructEvent, signedHeaders, WebhookSignatureError } from '../../packages/node/src/webhooks.js';
import { standardSignature, tolovSignature } from '../../src/modules/webhooks/signing.js';

const secret = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA==';
const body = JSON.stringify({ id: 'evt_1', object: 'event', type: 'order.paid', livemode: false, created: '2026-11-22T00:00:00.000Z', data: { id: 'ord_1' } });
const now = Date.parse('2026-11-22T12:00:00Z');
const t = Math.floor(now / 1000);
const sign = (key: string, timestamp: number, payload: string) => createHmac('sha256', key).update(`${timestamp}.${payload}`).digest('hex');

describe('constructEvent', () => {
  it('returns the event for a valid signature', () => {
    expect(constructEvent(body, `t=${t},v1=${sign(secret, t, body)}`, secret, 300, now)).toMatchObject({ id: 'evt_1', type: 'order.paid' });
    expect(constructEvent(Buffer.from(body), `t=${t},v1=${sign(secret, t, body)}`, secret, 300, now).id).toBe('evt_1');
  });

  it('accepts any of several v1 values (a secret being rolled)', () => {
    const header = `t=${t},v1=${sign('whsec_other', t, body)},v1=${sign(secret, t, body)}`;
    expect(constructEvent(body, header, secret, 300, now).id).toBe('evt_1');
  });

  it.each([
    ['a wrong secret', `t=${t},v1=${sign('whsec_wrong', t, body)}`, body, /no signature matches/],
    ['a tampered body', `t=${t},v1=${sign(secret, t, body)}`, body.replace('ord_1', 'ord_2'), /no signature matches/],
    ['a re-serialized body', `t=${t},v1=${sign(secret, t, body)}`, JSON.stringify(JSON.parse(body), null, 2), /no signature matches/],
    ['a stale timestamp', `t=${t - 301},v1=${sign(secret, t - 301, body)}`, body, /more than 300 s/],
    ['a future timestamp', `t=${t + 301},v1=${sign(secret, t + 301, body)}`, body, /more than 300 s/],
    ['no timestamp', `v1=${sign(secret, t, body)}`, body, /lacks t=$/],
    ['a timestamp that is not a time', `t=yesterday,v1=${sign(secret, t, body)}`, body, /t= is not a time in Unix seconds/],
    ['no v1', `t=${t}`, body, /lacks v1=$/],
    ['a v1 that is not hex', `t=${t},v1=zz`, body, /v1= is not 64 hexadecimal digits/],
    ['an empty header', '', body, /missing or malformed/],
  ])('refuses %s', (_, header, payload, message) => {
    expect(() => constructEvent(payload, header, secret, 300, now)).toThrow(WebhookSignatureError);
    expect(() => constructEvent(payload, header, secret, 300, now)).toThrow(message);
  });

  it('refuses a missing header', () => {
    expect(() => constructEvent(body, undefined, secret, 300, now)).toThrow(WebhookSignatureError);
  });

  it('honours a custom tolerance', () => {
    const old = t - 100;
    expect(() => constructEvent(body, `t=${old},v1=${sign(secret, old, body)}`, secret, 60, now)).toThrow(/more than 60 s/);
  });
});

describe('signedHeaders', () => {
  it('signs a body exactly as a delivery is signed, in both schemes', () => {
    const headers = signedHeaders(body, secret, { eventId: 'evt_1', eventType: 'order.paid', timestamp: t });
    expect(headers).toMatchObject({
      'tolov-signature': tolovSignature([secret], t, body),
      'webhook-signature': standardSignature([secret], 'evt_1', t, body),
      'webhook-id': 'evt_1',
      'webhook-timestamp': String(t),
      'tolov-event-id': 'evt_1',
      'tolov-event-type': 'order.paid',
    });
    expect(constructEvent(body, headers, secret, 300, now).id).toBe('evt_1');
  });
});
