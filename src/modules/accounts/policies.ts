// How often each guarded step of an account may be tried. Failures are counted per client address and per e-mail (or
// user), in the database for every process; a right answer gives its turns back. Past its free turns an account's
// step is slowed, not locked (NIST SP 800-63B §5.2.2): its owner, who knows the answer, waits a little and gets in.
import { sha256 } from '../../lib/secrets.js';
import type { ThrottlePolicy } from '../throttles/service.js';

const refusedPast = (name: string, free: number, windowSeconds: number): ThrottlePolicy => ({ name, windowSeconds, free, gapStepSeconds: 0, gapMaxSeconds: 0, waitMaxSeconds: 0 });

/** Password checks from one client address, whatever the account: 20 a minute. */
export const PASSWORD_ADDRESS = refusedPast('password-address', 20, 60);

/**
 * Failed passwords of one e-mail, whether a login has it or not, over a day: 10 at once, then each further check waits
 * 10 s more than the gap before, up to 15 minutes apart (about 150 guesses a day at most, from any number of
 * addresses); a turn more than 10 s away is refused with its time.
 */
export const PASSWORD_ACCOUNT: ThrottlePolicy = { name: 'password-account', windowSeconds: 86_400, free: 10, gapStepSeconds: 10, gapMaxSeconds: 900, waitMaxSeconds: 10 };

/** Wrong second-factor codes of one user, counted apart from the password, slowed the same way past 5. */
export const SECOND_FACTOR_USER: ThrottlePolicy = { name: 'second-factor', windowSeconds: 86_400, free: 5, gapStepSeconds: 10, gapMaxSeconds: 900, waitMaxSeconds: 10 };

/** New passwords hashed for one address (each costs ~100 ms of CPU): 10 an hour. */
export const NEW_PASSWORD_ADDRESS = refusedPast('new-password-address', 10, 3600);

/** Requests that may mail a link (sign-ups, password resets) from one address: 10 an hour. */
export const MAIL_REQUEST_ADDRESS = refusedPast('mail-request-address', 10, 3600);

/**
 * Mail one e-mail is sent at others' request: 3 an hour. Past it, requests are answered as usual and send nothing: the
 * owner has the links already sent, and no stranger can keep them from getting one.
 */
export const MAIL_PER_EMAIL = refusedPast('mail-email', 3, 3600);

/** Invitations one account sends: 20 an hour. */
export const INVITATIONS_ACCOUNT = refusedPast('invitations-account', 20, 3600);

/**
 * Invitations one account mails to one e-mail: 3 an hour. Counted per account, so that no stranger's account can keep
 * an address from its employer's invitation; a flood from many accounts needs as many confirmed sign-ups.
 */
export const INVITATIONS_EMAIL = refusedPast('invitations-email', 3, 3600);

/** An e-mail as a throttle's subject: its hash, so that the table names no one. */
export const emailSubject = (email: string) => sha256(email).toString('hex');

/**
 * An address mail can go to as it is written, and nothing else: a plain local part and a dotted domain. Quotes, angle
 * brackets, commas or semicolons would let one mailbox hide behind endless spellings, or one field name several.
 */
export const EMAIL_PATTERN = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@(?=.{4,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;
