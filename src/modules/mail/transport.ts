// How a message leaves Tolov: an SMTP server (TOLOV_SMTP_URL) through nodemailer, or, in development without one,
// the log, so that the person running Tolov can follow the link.
import type { FastifyBaseLogger } from 'fastify';
import nodemailer from 'nodemailer';

export interface Message {
  to: string;
  subject: string;
  text: string;
}

export interface MailTransport {
  send(message: Message): Promise<void>;
  close(): void;
}

const CONNECTION_TIMEOUT_MS = 10_000;
const GREETING_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 30_000;

/**
 * An SMTP server's transport. Over `smtp://` to another machine, STARTTLS is required: links that open accounts never
 * cross a network in clear, even if someone on the way strips the server's offer of it.
 */
export function smtpTransport(url: string, from: string): MailTransport {
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(new URL(url).hostname);
  const transporter = nodemailer.createTransport(
    { url, requireTLS: !loopback, connectionTimeout: CONNECTION_TIMEOUT_MS, greetingTimeout: GREETING_TIMEOUT_MS, socketTimeout: SOCKET_TIMEOUT_MS },
    { from },
  );
  return {
    async send(message) {
      // The address as given, never parsed for names or lists by the library.
      await transporter.sendMail({ ...message, to: { name: '', address: message.to } });
    },
    close: () => transporter.close(),
  };
}

/** Development without an SMTP server: each message in the log, links included (a production start refuses this). */
export function logTransport(log: FastifyBaseLogger): MailTransport {
  return {
    async send(message) {
      log.info({ mail: message }, 'mail written here, not sent: TOLOV_SMTP_URL is unset');
    },
    close: () => {},
  };
}
