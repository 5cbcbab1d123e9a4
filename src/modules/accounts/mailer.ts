// The mail of accounts: composed in the reader's language, queued in the transaction of what it tells, with links to
// this Tolov's own address.
import type { Transaction } from '../../db/types.js';
import type { Mail } from '../mail/service.js';
import { composeMail, type AccountMail, type MailLang } from './mail-texts.js';

export class AccountMailer {
  constructor(
    private readonly mail: Mail,
    /** Where links lead: TOLOV_CHECKOUT_URL. */
    private readonly publicUrl: string,
  ) {}

  queue(tx: Transaction, lang: MailLang, to: string, mail: AccountMail): void {
    this.mail.queue(tx, { to, ...composeMail(lang, mail) });
  }

  /** Sends what was queued, after the commit. */
  sendNow(): void {
    this.mail.sendNow();
  }

  link(path: string): string {
    return `${this.publicUrl}${path}`;
  }

  deleteOld(batchMax: number): Promise<number> {
    return this.mail.deleteOld(batchMax);
  }
}
