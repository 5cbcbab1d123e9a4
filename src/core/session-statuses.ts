// The statuses of a hosted page's session, which a card binding shows as its own: the checkout capability moves a
// session through them (its state machine), the card bindings read them.
export const SESSION_STATUSES = ['PENDING', 'AWAITING_CODE', 'PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];
