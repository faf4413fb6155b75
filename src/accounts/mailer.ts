import nodemailer, { type Transporter } from 'nodemailer';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  readonly kind: 'smtp' | 'log';
  send(mail: Mail): Promise<void>;
  close(): Promise<void>;
}

export class SmtpMailer implements Mailer {
  readonly kind = 'smtp' as const;
  private readonly transport: Transporter;

  constructor(url: string, private readonly from: string) {
    const u = new URL(url);
    const secure = u.protocol === 'smtps:';
    this.transport = nodemailer.createTransport({
      host: u.hostname,
      port: Number(u.port || (secure ? 465 : 587)),
      secure,
      auth: u.username ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } : undefined,
      // A local relay or test peer without TLS is allowed with ?tls=off.
      ignoreTLS: u.searchParams.get('tls') === 'off',
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
  }

  async send(mail: Mail): Promise<void> {
    await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text });
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}

/** The one log call the dev outbox makes (any pino/Fastify logger fits). */
export interface MailLog {
  warn(details: object, message: string): void;
}

/** Embedded default without SMTP: the mail goes to the log, clearly marked as a dev outbox. */
export class LogMailer implements Mailer {
  readonly kind = 'log' as const;
  constructor(private readonly log: MailLog) {}

  async send(mail: Mail): Promise<void> {
    this.log.warn({ devOutbox: { to: mail.to, subject: mail.subject, text: mail.text } }, 'DEV OUTBOX (SMTP_URL not set): mail not sent, written here instead');
  }

  async close(): Promise<void> {}
}
