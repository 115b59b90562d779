import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { GetCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { EventBody, TERMINAL_EVENTS, type RunEvent } from "../contracts/events.js";
import type { LogTip, RunEvents } from "../ports/events.js";
import { keys } from "./keys.js";

export type { LogTip } from "../ports/events.js";
import { expiresAt, type Table } from "./table.js";

/** Events one item holds at most; a listing looks this far back for the item holding `after + 1`. */
const MAX_EVENTS_PER_ITEM = 50;
/** Bytes of events one item holds at most (a DynamoDB item is at most 400 KB). */
const MAX_ITEM_BYTES = 300_000;
/** A text field of one event is cut beyond this (a model's whole output lives in the run, not in an event). */
const MAX_EVENT_TEXT = 32_000;

interface Pending {
  bodies: EventBody[];
  close: boolean;
  reopen: boolean;
  key?: string;
  resolve: (events: RunEvent[]) => void;
  reject: (error: unknown) => void;
}

/**
 * The run's event log: one gap-free sequence per run, written with one conditional put per item
 * and no counter. An item `EVT#<first seq>` holds one or more consecutive events; a writer puts the
 * next item at (the tip it knows + 1) only if no item is there, so two writers never share a number,
 * and a put that fails leaves no number behind. A writer whose tip is stale loses the put, reads the
 * tip again and retries. The terminal event's item is marked `closed`: a writer that sees it drops
 * what it has (the terminal event stays last).
 *
 * Appends from one process to one run are queued and written together (group commit): parallel
 * executors in one process share one put, and each caller's events keep their order. The queue is
 * drained from the next turn of the event loop, so appends made in one turn share a put too.
 */
export class EventLog implements RunEvents {
  private readonly tips = new Map<string, LogTip>();
  private readonly queues = new Map<string, Pending[]>();

  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
  ) {}

  /**
   * Appends events after the ones already there; [] once the log is closed (the run has ended).
   * `after`: the last number the caller knows of (0 for a run's first event), saving a read of the
   * tip when this process has not written to the run yet; a wrong guess only costs a retry.
   * `reopen`: write even after the terminal event (a failed run resumed); the log is open again.
   */
  append(runId: string, bodies: EventBody[], options: { close?: boolean; after?: number; reopen?: boolean; key?: string } = {}): Promise<RunEvent[]> {
    if (options.after !== undefined && !this.tips.has(runId)) this.remember(runId, { seq: options.after, closed: false });
    if (bodies.length === 0) return Promise.resolve([]);
    let valid: EventBody[];
    try {
      valid = bodies.map((body) => fitEvent(EventBody.parse(body)));
    } catch (error) {
      return Promise.reject(error);
    }
    // Each part fits one item; parts queue one after another, so the events keep their order.
    // A keyed append is one item (it is taken once, whole).
    const parts = options.key === undefined ? chunk(valid) : [valid];
    return Promise.all(
      parts.map(
        (part, i) =>
          new Promise<RunEvent[]>((resolve, reject) => {
            const pending = { bodies: part, close: (options.close ?? false) && i === parts.length - 1, reopen: options.reopen ?? false, key: options.key, resolve, reject };
            const queue = this.queues.get(runId);
            if (queue) return void queue.push(pending);
            this.queues.set(runId, [pending]);
            // Drained on the next turn of the event loop: what is appended in this turn (a tool's call
            // and an instant tool's result, a step's last events and the new plan) is one put.
            setImmediate(() => void this.drain(runId));
          }),
      ),
    ).then((results) => results.flat());
  }

  /** Writes what is queued for the run, as few items as fit, until the queue is empty. */
  private async drain(runId: string): Promise<void> {
    const queue = this.queues.get(runId)!;
    while (queue.length > 0) {
      const batch = takeBatch(queue);
      try {
        const bodies = batch.flatMap((p) => p.bodies);
        const close = batch.some((p) => p.close);
        const first = await this.put(runId, bodies, { close, reopen: batch.some((p) => p.reopen), key: batch[0]!.key });
        let seq = first ?? 0;
        const at = new Date().toISOString();
        for (const p of batch) p.resolve(first === undefined ? [] : p.bodies.map((body) => ({ ...body, seq: seq++, at }) as RunEvent));
      } catch (error) {
        for (const p of batch) p.reject(error);
      }
    }
    this.queues.delete(runId);
  }

  /**
   * Puts one item at the next free number; returns its first number, or undefined if the log is
   * closed (or, with a key, the append was written before). A keyed append records the number it
   * takes under the key first and the item carries the key, so a crash between the two leaves a
   * record that points at an item that is not the key's: the retry appends.
   */
  private async put(runId: string, bodies: EventBody[], options: { close: boolean; reopen: boolean; key?: string }): Promise<number | undefined> {
    const { close, reopen, key } = options;
    if (key !== undefined && (await this.appendedBefore(runId, key))) return undefined;
    const remembered = this.tips.get(runId);
    // A closed tip this process remembers may be stale: the run may have been resumed since.
    let tip = remembered && !(remembered.closed && !reopen) ? remembered : await this.tip(runId);
    for (let attempt = 0; ; attempt++) {
      if (tip.closed && !reopen) return undefined;
      const first = tip.seq + 1;
      const at = new Date().toISOString();
      const ttl = expiresAt(this.retentionDays);
      if (key !== undefined) await this.table.doc.send(new PutCommand({ TableName: this.table.name, Item: { ...keys.eventKey(runId, key), first, ttl } }));
      try {
        await this.table.doc.send(
          new PutCommand({
            TableName: this.table.name,
            Item: {
              ...keys.event(runId, first),
              events: bodies.map((body, i) => ({ ...body, seq: first + i, at })),
              ...(key !== undefined ? { dedupeKey: key } : {}),
              ...(close ? { closed: true } : {}),
              ttl,
            },
            ConditionExpression: "attribute_not_exists(pk)",
          }),
        );
        this.remember(runId, { seq: first + bodies.length - 1, closed: close });
        return first;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException) || attempt >= 50) throw error;
        tip = await this.tip(runId); // another writer took that number: read where the log is now
      }
    }
  }

  /** Whether the item the key's record points at is the key's own (the keyed append was written). */
  private async appendedBefore(runId: string, key: string): Promise<boolean> {
    const { Item: taken } = await this.table.doc.send(new GetCommand({ TableName: this.table.name, Key: keys.eventKey(runId, key), ConsistentRead: true }));
    if (typeof taken?.first !== "number") return false;
    const { Item: at } = await this.table.doc.send(
      new GetCommand({ TableName: this.table.name, Key: keys.event(runId, taken.first), ConsistentRead: true, ProjectionExpression: "dedupeKey" }),
    );
    return at?.dedupeKey === key;
  }

  /**
   * Writes events at a number nobody wrote (a gap in a log written by an older version, which
   * took numbers from a counter before writing): used by recovery; never overwrites.
   */
  async putAt(runId: string, firstSeq: number, bodies: EventBody[]): Promise<void> {
    const at = new Date().toISOString();
    try {
      await this.table.doc.send(
        new PutCommand({
          TableName: this.table.name,
          Item: { ...keys.event(runId, firstSeq), events: bodies.map((body, i) => ({ ...EventBody.parse(body), seq: firstSeq + i, at })), ttl: expiresAt(this.retentionDays) },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  /** The log's last number and whether it is closed, read from its last item. */
  async tip(runId: string): Promise<LogTip> {
    const { Items = [] } = await this.table.doc.send(
      new QueryCommand({
        TableName: this.table.name,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": keys.eventsPk(runId), ":prefix": keys.eventPrefix },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    const events = eventsOf(Items[0]);
    const tip = { seq: events.at(-1)?.seq ?? 0, closed: Items[0]?.closed === true || TERMINAL_EVENTS.has(events.at(-1)?.type ?? "") };
    this.remember(runId, tip);
    return tip;
  }

  /** Keeps the tips of the runs this process wrote to last (a warm container serves many runs). */
  private remember(runId: string, tip: LogTip): void {
    this.tips.delete(runId);
    this.tips.set(runId, tip);
    if (this.tips.size > 1_000) this.tips.delete(this.tips.keys().next().value!);
  }

  /** Events with seq greater than `after`, in order. */
  async list(runId: string, after = 0, limit = 100): Promise<RunEvent[]> {
    const events: RunEvent[] = [];
    // The item holding `after + 1` starts at most MAX_EVENTS_PER_ITEM - 1 numbers before it.
    let exclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await this.table.doc.send(
        new QueryCommand({
          TableName: this.table.name,
          KeyConditionExpression: "pk = :pk AND sk BETWEEN :from AND :to",
          ExpressionAttributeValues: { ":pk": keys.eventsPk(runId), ":from": keys.eventSk(Math.max(0, after - MAX_EVENTS_PER_ITEM + 1)), ":to": `${keys.eventPrefix}~` },
          ExclusiveStartKey: exclusiveStartKey,
          Limit: Math.ceil(limit / 2) + 1,
          ConsistentRead: true,
        }),
      );
      for (const item of page.Items ?? []) events.push(...eventsOf(item).filter((e) => e.seq > after));
      exclusiveStartKey = page.LastEvaluatedKey;
    } while (exclusiveStartKey && events.length < limit);
    return events.slice(0, limit);
  }
}

function eventsOf(item: Record<string, unknown> | undefined): RunEvent[] {
  if (!item) return [];
  if (Array.isArray(item.events)) return item.events as RunEvent[];
  // An item of an older version: one event, at the item's top level.
  if (typeof item.seq === "number" && typeof item.type === "string") {
    const { pk: _pk, sk: _sk, ttl: _ttl, ...event } = item;
    return [event as unknown as RunEvent];
  }
  return [];
}

/** Bodies in runs that each fit one item. */
function chunk(bodies: EventBody[]): EventBody[][] {
  const parts: EventBody[][] = [[]];
  let bytes = 0;
  for (const body of bodies) {
    const size = JSON.stringify(body).length;
    if (parts.at(-1)!.length > 0 && (parts.at(-1)!.length >= MAX_EVENTS_PER_ITEM || bytes + size > MAX_ITEM_BYTES)) {
      parts.push([]);
      bytes = 0;
    }
    parts.at(-1)!.push(body);
    bytes += size;
  }
  return parts;
}

/** As many queued appends as fit one item (whole appends; one too big for an item goes alone). */
function takeBatch(queue: Pending[]): Pending[] {
  const batch = [queue.shift()!];
  if (batch[0]!.key !== undefined) return batch; // a keyed append goes alone
  let count = batch[0]!.bodies.length;
  let bytes = JSON.stringify(batch[0]!.bodies).length;
  while (queue.length > 0 && !batch.at(-1)!.close) {
    const next = queue[0]!;
    if (next.key !== undefined) break;
    const size = JSON.stringify(next.bodies).length;
    if (count + next.bodies.length > MAX_EVENTS_PER_ITEM || bytes + size > MAX_ITEM_BYTES) break;
    batch.push(queue.shift()!);
    count += next.bodies.length;
    bytes += size;
  }
  return batch;
}

/** Long text in an event is cut with a note: the whole text is in the run (result, task, files). */
function fitEvent(body: EventBody): EventBody {
  const data = body.data as Record<string, unknown>;
  let changed: Record<string, unknown> | undefined;
  for (const field of ["text", "result", "output", "input"]) {
    const value = data[field];
    if (typeof value === "string" && value.length > MAX_EVENT_TEXT) {
      changed ??= { ...data };
      changed[field] = `${value.slice(0, MAX_EVENT_TEXT)}… [${value.length - MAX_EVENT_TEXT} more characters, kept with the run]`;
    }
  }
  if (data.arguments !== undefined && JSON.stringify(data.arguments).length > MAX_EVENT_TEXT) {
    changed ??= { ...data };
    changed.arguments = `${JSON.stringify(data.arguments).slice(0, MAX_EVENT_TEXT)}… [arguments cut]`;
  }
  return changed ? ({ ...body, data: changed } as EventBody) : body;
}
