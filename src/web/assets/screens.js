// Which screen a hosted page shows for a session: shared by the page's script and the server's first HTML, so that
// both put the same heading over the same state. Names map onto the texts: `expired` → expiredTitle, expiredText.

/**
 * `session`: the public session state (or null before it is known); `gone`: 'expired' or 'notFound' when the session
 * call answered 410 or 404. `final` screens offer the way back to the shop; `summary` screens show what is paid.
 */
export function screenOf(session, gone) {
  if (gone === 'expired') return { name: 'expired', symbol: 'warning', final: true, summary: true };
  if (gone === 'notFound') return { name: 'notFound', symbol: 'warning', final: true, summary: false };
  if (!session) return { name: 'loading', symbol: null, final: false, summary: false };
  const order = session.kind === 'order';
  const screen = (name, symbol = null, final = symbol === 'warning' || symbol === 'success') => ({ name, symbol, final, summary: order && name !== 'paid' });
  if (session.status === 'COMPLETED') return screen(order ? 'paid' : 'done', 'success');
  if (session.status === 'PROCESSING') return screen('processing', 'pending');
  // A session closed for used-up attempts says so; an order's FAILED session otherwise means the bank refused, and why.
  if (order && session.status === 'FAILED' && session.failureCode !== 'TOO_MANY_ATTEMPTS') return { ...screen('refused', 'warning'), reason: session.failureCode };
  if (order && session.order.status === 'CANCELED') return screen('canceled', 'warning');
  if (session.status === 'EXPIRED') return screen('expired', 'warning');
  if (session.status === 'FAILED') return screen('failed', 'warning');
  // Tolov suspended the shop: an open session cannot be paid, said before the buyer types a card.
  if (session.shopSuspended && isOpen(session)) return screen('suspended', 'warning');
  if (session.status === 'AWAITING_CODE') return screen('code');
  return screen(order ? 'pay' : 'bind');
}

/** Whether the buyer can still act on the session: the time left to pay is shown only then. */
export const isOpen = (session) => session.status === 'PENDING' || session.status === 'AWAITING_CODE';

/** `754` seconds → `12:34`. */
export const clock = (seconds) => `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
