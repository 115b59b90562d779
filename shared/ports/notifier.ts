import type { NotifyMessage } from "../contracts/notify.js";

/**
 * The notifier port: the queue the notify function reads (webhook deliveries, runs waiting for a
 * person, runs ended without their execution), and its dead-letter queue. Adapter: NotifyQueue
 * (SQS); fake: shared/testing/memoryNotifier.ts.
 */
export interface Notifier {
  send(message: NotifyMessage, delayMs?: number): Promise<void>;
  /** After the last attempt: kept for people and tools to look at and replay. */
  deadLetter(message: NotifyMessage & { reason: string }): Promise<void>;
}
