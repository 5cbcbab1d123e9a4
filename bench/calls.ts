// The benchmark's own client calls: one JSON call as a merchant's client would send it, and a card bound as a buyer would.

/** Sends one JSON call and answers the parsed body. */
export type Caller = (method: 'GET' | 'POST', path: string, body?: unknown, headers?: Record<string, string>) => Promise<Record<string, string>>;

/** A Caller over HTTP to `url`; an answer that is not 2xx throws, with its body. */
export const fetchCaller =
  (url: string): Caller =>
  async (method, path, body, headers = {}) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await response.json()) as Record<string, string>;
    if (!response.ok) throw new Error(`${method} ${url}${path}: ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  };

/**
 * Binds the always-succeeding card through the public calls, as a buyer would, and returns its id; `smsCode` gives the
 * code the bank sent to `phone` (a fixed one in test mode).
 */
export async function bindCard(call: Caller, authorization: string, phone: string, smsCode: () => Promise<string>): Promise<string> {
  const binding = await call('POST', '/subscribe/v1/card_bindings', {}, { authorization });
  await call('POST', `/checkout/v1/sessions/${binding.clientToken}/card`, { pan: '8600000000000007', expiry: '12/30', phone });
  await call('POST', `/checkout/v1/sessions/${binding.clientToken}/code`, { code: await smsCode() });
  return (await call('GET', `/subscribe/v1/card_bindings/${binding.id}`, undefined, { authorization })).card!;
}
