import { createHash, randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import { LOCAL_ACCOUNT, LOCAL_REGION } from "./account.js";
import { type LocalCredentials, refuseUnsigned } from "./sigv4.mjs";

interface Message {
  id: string;
  body: string;
  visibleAt: number;
  receiveCount: number;
  sentAt: number;
}

interface Queue {
  name: string;
  url: string;
  messages: Message[];
  deadLetter?: { queue: Queue; maxReceiveCount: number };
}

const md5 = (text: string) => createHash("md5").update(text).digest("hex");

class SqsError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * SQS on loopback: the JSON-protocol actions the AWS SDK uses (SendMessage, ReceiveMessage,
 * DeleteMessage, GetQueueAttributes), plus what Lambda's SQS event source does — batches go to a
 * handler, failed items come back after the visibility timeout, and after `maxReceiveCount`
 * receives a message moves to the dead-letter queue.
 */
export class LocalSqs {
  private readonly queues = new Map<string, Queue>();
  private server?: Server;
  private endpoint = "";
  private readonly pollers: NodeJS.Timeout[] = [];
  /** Batches being handled: closing waits for them, so no handler outlives the parts it calls. */
  private readonly handling = new Set<Promise<void>>();

  constructor(private readonly credentials: LocalCredentials) {}

  async listen(): Promise<string> {
    this.server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      if (await refuseUnsigned(req, Buffer.concat(chunks), this.credentials, res)) return;
      const action = String(req.headers["x-amz-target"] ?? "").replace(/^AmazonSQS\./, "");
      try {
        const body = this.dispatch(action, JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}"));
        res.writeHead(200, { "content-type": "application/x-amz-json-1.0" }).end(JSON.stringify(body));
      } catch (error) {
        const type = error instanceof SqsError ? error.type : "InvalidParameterValue";
        res.writeHead(400, { "content-type": "application/x-amz-json-1.0", "x-amzn-query-error": `${type};Sender` });
        res.end(JSON.stringify({ __type: `com.amazonaws.sqs#${type}`, message: (error as Error).message }));
      }
    });
    const server = this.server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.endpoint = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.endpoint;
  }

  createQueue(name: string, deadLetter?: { queueUrl: string; maxReceiveCount: number }): string {
    const url = `${this.endpoint}/${LOCAL_ACCOUNT}/${name}`;
    const dlq = deadLetter ? this.byUrl(deadLetter.queueUrl) : undefined;
    this.queues.set(url, {
      name,
      url,
      messages: [],
      deadLetter: dlq && deadLetter ? { queue: dlq, maxReceiveCount: deadLetter.maxReceiveCount } : undefined,
    });
    return url;
  }

  /** Lambda's event source mapping: poll the queue and hand batches to the handler. */
  subscribe(
    queueUrl: string,
    handler: (event: SQSEvent) => Promise<SQSBatchResponse | undefined>,
    options: { visibilityMs: number; pollMs?: number },
  ) {
    const queue = this.byUrl(queueUrl);
    let busy = false;
    const poll = async () => {
      if (busy) return;
      busy = true;
      try {
        const batch = this.receive(queue, 10, options.visibilityMs);
        if (batch.length === 0) return;
        const event: SQSEvent = {
          Records: batch.map((m) => ({
            messageId: m.id,
            receiptHandle: m.id,
            body: m.body,
            attributes: {
              ApproximateReceiveCount: String(m.receiveCount),
              SentTimestamp: String(m.sentAt),
              SenderId: LOCAL_ACCOUNT,
              ApproximateFirstReceiveTimestamp: String(Date.now()),
            },
            messageAttributes: {},
            md5OfBody: md5(m.body),
            eventSource: "aws:sqs",
            eventSourceARN: `arn:aws:sqs:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${queue.name}`,
            awsRegion: LOCAL_REGION,
          })),
        };
        let failed = new Set(batch.map((m) => m.id));
        try {
          const response = await handler(event);
          failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
        } catch (error) {
          console.error(JSON.stringify({ msg: "local SQS consumer failed", error: String(error) }));
        }
        queue.messages = queue.messages.filter((m) => !batch.includes(m) || failed.has(m.id));
      } finally {
        busy = false;
      }
    };
    this.pollers.push(
      setInterval(() => {
        const handled = poll();
        this.handling.add(handled);
        void handled.finally(() => this.handling.delete(handled));
      }, options.pollMs ?? 50),
    );
  }

  /** Lambda's event source mappings stop: no new batch, and the batches being handled end first. */
  async stopPolling(): Promise<void> {
    for (const poller of this.pollers.splice(0)) clearInterval(poller);
    await Promise.all(this.handling);
  }

  async close(): Promise<void> {
    await this.stopPolling();
    const { server } = this;
    if (server) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  private byUrl(url: string): Queue {
    const queue = this.queues.get(url) ?? [...this.queues.values()].find((q) => url.endsWith(`/${q.name}`));
    if (!queue) throw new SqsError("QueueDoesNotExist", `The specified queue does not exist: ${url}`);
    return queue;
  }

  private send(queue: Queue, body: string, delaySeconds = 0): Message {
    if (typeof body !== "string" || body.length === 0)
      throw new SqsError("InvalidParameterValue", "MessageBody must be a non-empty string");
    if (delaySeconds < 0 || delaySeconds > 900) throw new SqsError("InvalidParameterValue", "DelaySeconds must be from 0 to 900");
    const message = { id: randomUUID(), body, visibleAt: Date.now() + delaySeconds * 1000, receiveCount: 0, sentAt: Date.now() };
    queue.messages.push(message);
    return message;
  }

  private receive(queue: Queue, max: number, visibilityMs: number): Message[] {
    const now = Date.now();
    const batch: Message[] = [];
    for (const message of [...queue.messages]) {
      if (batch.length >= max || message.visibleAt > now) continue;
      if (queue.deadLetter && message.receiveCount >= queue.deadLetter.maxReceiveCount) {
        queue.messages = queue.messages.filter((m) => m !== message);
        queue.deadLetter.queue.messages.push({ ...message, visibleAt: now });
        continue;
      }
      message.receiveCount += 1;
      message.visibleAt = now + visibilityMs;
      batch.push(message);
    }
    return batch;
  }

  // biome-ignore lint/suspicious/noExplicitAny: the request's JSON body, whose fields depend on the action (each case reads the ones the AWS API defines for it)
  private dispatch(action: string, input: any): unknown {
    switch (action) {
      case "SendMessage": {
        const message = this.send(this.byUrl(input.QueueUrl), input.MessageBody, input.DelaySeconds);
        return { MessageId: message.id, MD5OfMessageBody: md5(message.body) };
      }
      case "ReceiveMessage": {
        const messages = this.receive(this.byUrl(input.QueueUrl), input.MaxNumberOfMessages ?? 1, (input.VisibilityTimeout ?? 30) * 1000);
        return { Messages: messages.map((m) => ({ MessageId: m.id, ReceiptHandle: m.id, Body: m.body, MD5OfBody: md5(m.body) })) };
      }
      case "DeleteMessage": {
        const queue = this.byUrl(input.QueueUrl);
        queue.messages = queue.messages.filter((m) => m.id !== input.ReceiptHandle);
        return {};
      }
      case "GetQueueAttributes": {
        const queue = this.byUrl(input.QueueUrl);
        return { Attributes: { ApproximateNumberOfMessages: String(queue.messages.length) } };
      }
      default:
        throw new SqsError("UnsupportedOperation", `${action || "(no action)"} is not supported by the local SQS endpoint`);
    }
  }
}
