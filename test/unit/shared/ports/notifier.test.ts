import { ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalSqs } from "../../../../infra/local/sqs.js";
import type { NotifyMessage } from "../../../../shared/contracts/notify.js";
import type { Notifier } from "../../../../shared/ports/notifier.js";
import { MemoryNotifier } from "../../../../shared/testing/memoryNotifier.js";
import { NotifyQueue } from "../../../../shared/webhooks/queue.js";
import { freshId, TEST_CREDENTIALS } from "../../../support/dynalite.js";

/** The notifier port's contract: fake and SQS adapter (on the local SQS endpoint) alike, seen by the queue's consumer. */

let local: LocalSqs | undefined;
let sqs: SQSClient | undefined;
beforeAll(async () => {
  local = new LocalSqs(TEST_CREDENTIALS);
  sqs = new SQSClient({ endpoint: await local.listen(), region: "us-east-1", credentials: TEST_CREDENTIALS });
});
afterAll(async () => {
  sqs?.destroy();
  await local?.close();
});

/** What a consumer of a queue sees now. */
async function receive(queueUrl: string): Promise<unknown[]> {
  const { Messages = [] } = await sqs!.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 }));
  return Messages.map((m) => JSON.parse(m.Body!));
}

describe.each([
  {
    name: "in memory",
    make: () => {
      const notifier = new MemoryNotifier();
      return {
        notifier: notifier as Notifier,
        visible: async () => notifier.sent.filter((s) => s.delayMs === 0).map((s) => s.message),
        deadLettered: async () => notifier.deadLetters,
      };
    },
  },
  {
    name: "SQS adapter on the local endpoint",
    make: () => {
      const queueUrl = local!.createQueue(freshId("notify"));
      const deadLetterUrl = local!.createQueue(freshId("dead"));
      return {
        notifier: new NotifyQueue(sqs!, queueUrl, deadLetterUrl) as Notifier,
        visible: () => receive(queueUrl),
        deadLettered: () => receive(deadLetterUrl),
      };
    },
  },
])("notifier port: $name", ({ make }) => {
  it("a message reaches the queue's consumer as sent; a delayed one is not there yet", async () => {
    const { notifier, visible } = make();
    const now: NotifyMessage = { kind: "deliver", runId: "run_1", deliveryId: "msg_1", attempt: 1 };
    await notifier.send(now);
    await notifier.send({ kind: "deliver", runId: "run_1", deliveryId: "msg_1", attempt: 2 }, 60_000);
    expect(await visible()).toEqual([now]);
  });

  it("a message that is not a notification is refused and nothing is queued", async () => {
    const { notifier, visible } = make();
    await expect(notifier.send({ kind: "deliver", runId: "run_1" } as unknown as NotifyMessage)).rejects.toThrow();
    expect(await visible()).toEqual([]);
  });

  it("a dead letter keeps the message and why it was given up", async () => {
    const { notifier, deadLettered } = make();
    await notifier.deadLetter({ kind: "ended", runId: "run_2", reason: "receiver answered 500 ten times" });
    expect(await deadLettered()).toEqual([{ kind: "ended", runId: "run_2", reason: "receiver answered 500 ten times" }]);
  });
});
