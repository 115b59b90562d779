import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterEach, describe, expect, it } from "vitest";
import { LocalSqs } from "../../../../infra/local/sqs.js";
import { TEST_CREDENTIALS } from "../../../support/dynalite.js";

describe("the local SQS event source mapping", () => {
  const opened: { sqs: LocalSqs; client: SQSClient }[] = [];
  afterEach(async () => {
    for (const { sqs, client } of opened.splice(0)) {
      client.destroy();
      await sqs.close();
    }
  });

  it("stops after the batch being handled has ended, so no handler outlives the stack's parts", async () => {
    const sqs = new LocalSqs(TEST_CREDENTIALS);
    const client = new SQSClient({ endpoint: await sqs.listen(), region: "us-east-1", credentials: TEST_CREDENTIALS });
    opened.push({ sqs, client });
    const queueUrl = sqs.createQueue("stop-test");
    const steps: string[] = [];
    let started!: () => void;
    const handlerStarted = new Promise<void>((resolve) => (started = resolve));
    sqs.subscribe(
      queueUrl,
      async (event) => {
        steps.push(`handling ${event.Records.length}`);
        started();
        await new Promise((resolve) => setTimeout(resolve, 300));
        steps.push("handled");
        return { batchItemFailures: [] };
      },
      { visibilityMs: 1_000, pollMs: 10 },
    );
    await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: "status change" }));
    await handlerStarted;
    await sqs.stopPolling();
    steps.push("stopped");
    // Sent after the stop: nothing handles it.
    await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: "later" }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(steps).toEqual(["handling 1", "handled", "stopped"]);
  });
});
