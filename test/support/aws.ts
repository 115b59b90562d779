import { DynamoDBClient, GetItemCommand, paginateScan } from "@aws-sdk/client-dynamodb";
import { DescribeExecutionCommand, SFNClient } from "@aws-sdk/client-sfn";
import { GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { StackEndpoints } from "./localStack.js";

/**
 * Looks behind the API of a local stack, at the emulated AWS services, with the real AWS SDK
 * clients (signed with the stack's credentials, in its region): what a test cannot see over HTTP.
 */
export class Behind {
  readonly dynamo: DynamoDBClient;
  readonly sqs: SQSClient;
  readonly sfn: SFNClient;

  constructor(readonly endpoints: StackEndpoints) {
    const common = { region: endpoints.region || "us-east-1", credentials: endpoints.credentials };
    this.dynamo = new DynamoDBClient({ ...common, endpoint: endpoints.dynamodb });
    this.sqs = new SQSClient({ ...common, endpoint: endpoints.sqs });
    this.sfn = new SFNClient({ ...common, endpoint: endpoints.sfn });
  }

  /** The ids of every run record in the table (`RUN#id` / `META`), of one tenant if given. */
  async runIds(tenantId?: string): Promise<string[]> {
    const ids: string[] = [];
    const pages = paginateScan(
      { client: this.dynamo },
      {
        TableName: this.endpoints.tableName || "stepwise",
        FilterExpression: `sk = :meta AND begins_with(pk, :run)${tenantId ? " AND tenantId = :tenant" : ""}`,
        ExpressionAttributeValues: { ":meta": { S: "META" }, ":run": { S: "RUN#" }, ...(tenantId ? { ":tenant": { S: tenantId } } : {}) },
      },
    );
    for await (const page of pages) for (const item of page.Items ?? []) ids.push(item.pk!.S!.slice("RUN#".length));
    return ids.sort();
  }

  /**
   * Waits until the notifier has handled a run's end, which under load can be seconds after the
   * run's end event: the run's state-transition count is on its record (the notifier's write), and
   * the notification queue is empty (a message leaves it once handled, so the notifier's later
   * writes, the session's hand-over and the deliveries, have landed too). A test that compares the
   * table before and after something must not have them land in between.
   */
  async untilEndHandled(runId: string, timeoutMs = 60_000): Promise<void> {
    const giveUpAt = Date.now() + timeoutMs;
    for (;;) {
      const [{ Item }, { Attributes }] = await Promise.all([
        this.dynamo.send(
          new GetItemCommand({
            TableName: this.endpoints.tableName || "stepwise",
            Key: { pk: { S: `RUN#${runId}` }, sk: { S: "META" } },
            ConsistentRead: true,
          }),
        ),
        this.sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: this.endpoints.notifyQueueUrl, AttributeNames: ["ApproximateNumberOfMessages"] }),
        ),
      ]);
      if (Item?.stateTransitions && Attributes?.ApproximateNumberOfMessages === "0") return;
      if (Date.now() > giveUpAt) throw new Error(`the notifier did not finish handling the end of ${runId} within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /**
   * Every message now in the dead-letter queue, parsed. Received with a zero visibility timeout,
   * so they stay visible to the next reader (and to other tests).
   */
  async deadLetters(): Promise<any[]> {
    const seen = new Map<string, any>();
    // The local queue hands out at most 10 a call; read until a call brings nothing new.
    for (let round = 0; round < 20; round++) {
      const { Messages = [] } = await this.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: this.endpoints.deadLetterQueueUrl,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 0,
          WaitTimeSeconds: 0,
        }),
      );
      let fresh = 0;
      for (const m of Messages) {
        if (seen.has(m.MessageId!)) continue;
        fresh++;
        seen.set(m.MessageId!, JSON.parse(m.Body!));
      }
      if (fresh === 0) break;
    }
    return [...seen.values()];
  }

  /** Step Functions' own view of a run's execution (the execution is named after the run). */
  async execution(runId: string) {
    const executionArn = `${this.endpoints.stateMachineArn.replace(":stateMachine:", ":execution:")}:${runId}`;
    return this.sfn.send(new DescribeExecutionCommand({ executionArn }));
  }

  destroy(): void {
    this.dynamo.destroy();
    this.sqs.destroy();
    this.sfn.destroy();
  }
}
