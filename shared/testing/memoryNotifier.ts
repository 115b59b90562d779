import { NotifyMessage } from "../contracts/notify.js";
import type { Notifier } from "../ports/notifier.js";

/** The notifier port in memory: what was queued (with its delay) and dead-lettered, in order. */
export class MemoryNotifier implements Notifier {
  readonly sent: { message: NotifyMessage; delayMs: number }[] = [];
  readonly deadLetters: (NotifyMessage & { reason: string })[] = [];

  async send(message: NotifyMessage, delayMs = 0): Promise<void> {
    this.sent.push({ message: NotifyMessage.parse(message), delayMs }); // parsed, as the queue adapter does
  }

  async deadLetter(message: NotifyMessage & { reason: string }): Promise<void> {
    this.deadLetters.push(structuredClone(message));
  }

  /** Takes what was queued so far (a test plays the queue's consumer). */
  take(): NotifyMessage[] {
    return this.sent.splice(0).map((s) => s.message);
  }
}
