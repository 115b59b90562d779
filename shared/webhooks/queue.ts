import { SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { NotifyMessage } from "../contracts/notify.js";
import { countMetric, logger } from "../observability.js";
import type { Notifier } from "../ports/notifier.js";

const MAX_SQS_DELAY_SECONDS = 900;

/** The notification queue and its dead-letter queue. */
export class NotifyQueue implements Notifier {
  constructor(
    private readonly sqs: SQSClient,
    private readonly queueUrl: string | undefined,
    private readonly deadLetterUrl: string | undefined,
  ) {}

  async send(message: NotifyMessage, delayMs = 0): Promise<void> {
    if (!this.queueUrl) return logger.warn("NOTIFY_QUEUE_URL is not set: notification dropped", { message });
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: JSON.stringify(NotifyMessage.parse(message)),
        DelaySeconds: Math.min(MAX_SQS_DELAY_SECONDS, Math.ceil(delayMs / 1000)),
      }),
    );
  }

  /** After the last attempt: the message is kept for people and tools to look at and replay. */
  async deadLetter(message: NotifyMessage & { reason: string }): Promise<void> {
    countMetric("WebhookDeadLetters");
    if (!this.deadLetterUrl) return logger.error("DEAD_LETTER_QUEUE_URL is not set", { message });
    await this.sqs.send(new SendMessageCommand({ QueueUrl: this.deadLetterUrl, MessageBody: JSON.stringify(message) }));
  }
}
