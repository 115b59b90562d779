import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { BatchWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { EventBody, type RunEvent } from "../contracts/events.js";
import { keys } from "./keys.js";
import { expiresAt, itemData, type Table } from "./table.js";

/**
 * The run's event log. Sequence numbers come from an atomic counter on the run item, so parallel
 * executors never collide; a batch of events reserves its numbers in one round trip.
 */
export class EventLog {
  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
  ) {}

  /**
   * Appends events after the ones already there. Once the run has ended, the log is closed: what a
   * step still running then tries to add is dropped (returns []), so the terminal event stays last.
   */
  async append(runId: string, bodies: EventBody[]): Promise<RunEvent[]> {
    if (bodies.length === 0) return [];
    const first = await this.reserve(runId, bodies.length);
    return first === undefined ? [] : this.putAt(runId, first, bodies);
  }

  /** Takes `count` sequence numbers and returns the first, or undefined if the log is closed. */
  private async reserve(runId: string, count: number): Promise<number | undefined> {
    try {
      const counter = await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: keys.run(runId),
          UpdateExpression: "ADD eventSeq :n",
          ConditionExpression: "attribute_exists(pk) AND attribute_not_exists(terminalSeq)",
          ExpressionAttributeValues: { ":n": count },
          ReturnValues: "UPDATED_NEW",
        }),
      );
      return Number(counter.Attributes?.eventSeq) - count + 1;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }

  /** Writes events at reserved sequence numbers (writing the same one again overwrites it: idempotent). */
  async putAt(runId: string, firstSeq: number, bodies: EventBody[]): Promise<RunEvent[]> {
    const valid = bodies.map((body) => EventBody.parse(body));
    const at = new Date().toISOString();
    const events = valid.map((body, i) => ({ ...body, seq: firstSeq + i, at }) as RunEvent);
    const ttl = expiresAt(this.retentionDays);
    for (let i = 0; i < events.length; i += 25) {
      const chunk = events.slice(i, i + 25);
      let requestItems: Record<string, any> | undefined = {
        [this.table.name]: chunk.map((event) => ({
          PutRequest: { Item: { ...keys.event(runId, event.seq), ...event, ttl } },
        })),
      };
      // BatchWrite may hand back unprocessed items under load: send those again.
      for (let attempt = 0; requestItems && Object.keys(requestItems).length > 0; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, 20 * 2 ** Math.min(attempt, 6)));
        const result: { UnprocessedItems?: Record<string, any> } = await this.table.doc.send(new BatchWriteCommand({ RequestItems: requestItems }));
        requestItems = result.UnprocessedItems;
      }
    }
    return events;
  }

  async has(runId: string, seq: number): Promise<boolean> {
    const [event] = await this.list(runId, seq - 1, 1);
    return event?.seq === seq;
  }

  /** Events with seq greater than `after`, in order. */
  async list(runId: string, after = 0, limit = 100): Promise<RunEvent[]> {
    const items = await this.table.queryPrefix<Record<string, unknown>>(`RUN#${runId}`, keys.eventPrefix, {
      limit,
      startSk: after > 0 ? keys.eventSk(after) : undefined,
    });
    return items.map((item) => itemData(item) as unknown as RunEvent);
  }
}
