import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export interface ReceivedMail {
  to: string[];
  raw: string;
}

/** A real SMTP server on loopback that keeps what it receives, for the mail-flow tests. */
export class SmtpPeer {
  readonly mails: ReceivedMail[] = [];
  private waiters: (() => void)[] = [];
  private server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData: (stream, session, callback) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        this.mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        this.waiters.splice(0).forEach((w) => w());
        callback();
      });
    },
  });
  port = 0;

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.server.address() as AddressInfo).port;
    return `smtp://127.0.0.1:${this.port}?tls=off`;
  }

  /** Waits for the next mail to `to` and returns the 6-digit code in it. */
  async codeFor(to: string, timeoutMs = 5000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const mail = [...this.mails].reverse().find((m) => m.to.includes(to.toLowerCase()));
      const code = mail && /code is (\d{6})/.exec(mail.raw)?.[1];
      if (code) {
        this.mails.splice(this.mails.indexOf(mail!), 1);
        return code;
      }
      if (Date.now() > deadline) throw new Error(`no mail for ${to}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
