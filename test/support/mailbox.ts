// A real SMTP server on loopback that keeps what it receives, so that tests read the mail Tolov sends as a user would.
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string;
  from: string;
  subject: string;
  text: string;
}

const WAIT_MS = 15_000;
const MESSAGE_BYTES_MAX = 256 * 1024;

export class Mailbox {
  readonly received: ReceivedMail[] = [];
  private readonly taken = new Set<ReceivedMail>();

  private constructor(
    private readonly server: SMTPServer,
    readonly url: string,
  ) {}

  static async start(): Promise<Mailbox> {
    let box: Mailbox | undefined;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      size: MESSAGE_BYTES_MAX,
      logger: false,
      onData(stream, session, callback) {
        simpleParser(stream)
          .then((parsed) => {
            for (const to of session.envelope.rcptTo) {
              box!.received.push({ to: to.address, from: parsed.from?.text ?? '', subject: parsed.subject ?? '', text: parsed.text ?? '' });
            }
            callback();
          })
          .catch(callback);
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.server.address() as AddressInfo;
    box = new Mailbox(server, `smtp://127.0.0.1:${port}`);
    return box;
  }

  /** The first mail to `to` not taken yet (and matching `subject` when given), waiting for it to arrive. */
  async next(to: string, subject?: RegExp): Promise<ReceivedMail> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const mail = this.received.find((one) => one.to === to && !this.taken.has(one) && (subject === undefined || subject.test(one.subject)));
      if (mail) {
        this.taken.add(mail);
        return mail;
      }
      if (Date.now() > deadline) throw new Error(`no mail to ${to} within ${WAIT_MS} ms (received: ${this.received.map((one) => `${one.to}: ${one.subject}`).join('; ') || 'none'})`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** Every mail to `to` received so far. */
  to(to: string): ReceivedMail[] {
    return this.received.filter((one) => one.to === to);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The path of the first link in `mail` that goes to `prefix`. */
export function linkIn(mail: ReceivedMail, prefix: string): string {
  const match = new RegExp(`https?://[^\\s]+(${prefix.replace(/[/.]/g, '\\$&')}[^\\s]*)`).exec(mail.text);
  if (!match) throw new Error(`no link to ${prefix} in the mail "${mail.subject}": ${mail.text}`);
  return match[1]!;
}
