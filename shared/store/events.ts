import { randomBytes } from "node:crypto";
import { EventBody, type RunEvent } from "../contracts/events.js";
import { TERMINAL_EVENTS } from "../contracts/terminal.js";
import type { LogTip, RunEvents } from "../ports/events.js";
import { cutToBytes, utf8Bytes } from "../text/bytes.js";
import { keys } from "./keys.js";
import { expiresAt, ifConditionHolds, type Table, updatedItem } from "./table.js";

/** Events one item holds at most; a listing looks this far back for the item holding `after + 1`. */
const MAX_EVENTS_PER_ITEM = 50;
/** Bytes of events one item holds at most (a DynamoDB item is at most 400 KB). */
const MAX_ITEM_BYTES = 300_000;
/**
 * A text field of one event is cut beyond this many UTF-8 bytes (a model's whole output lives in the
 * run, not in an event): its five text fields together stay within an item.
 */
const MAX_EVENT_TEXT_BYTES = 48_000;
/**
 * How long a number may stay taken but unwritten, while later events are written, before a reader
 * fills it: its writer stopped between taking it and writing it (a live writer's put lands within
 * milliseconds; one that lands later than this finds its number filled and appends again).
 */
const FILL_AFTER_MS = 5_000;
/** What a reader writes at a number nobody wrote, so the log reads without a gap. */
const LOST_EVENT: EventBody = {
  type: "run.resumed",
  data: {
    redrive: false,
    reason: "Nothing was written at this number: its writer stopped between taking the number and writing the event.",
  },
};

/** The counter's attributes, by name (some are reserved words in expressions). */
const COUNTER_NAMES: Record<string, string> = { "#seq": "seq", "#ttl": "ttl", "#closed": "closed", "#closedAt": "closedAt" };
/** The counter's names an expression uses (DynamoDB refuses names it does not use). */
const namesIn = (...expressions: string[]) =>
  Object.fromEntries(Object.entries(COUNTER_NAMES).filter(([name]) => expressions.some((e) => new RegExp(`${name}\\b`).test(e))));

interface Pending {
  bodies: EventBody[];
  close: boolean;
  reopen: boolean;
  key?: string;
  resolve: (events: RunEvent[]) => void;
  reject: (error: unknown) => void;
}

/**
 * The run's event log: one gap-free sequence per run, written by many writers at once (each
 * executor is its own Lambda container). An append takes its numbers from the log's counter
 * (`SEQ`, one UpdateItem ADD, which DynamoDB applies one after another and never refuses) and puts
 * its events in one item `EVT#<first seq>` (one or more consecutive events) at that number: two
 * requests per append however many write at once, and no read. (A conditional put at the tip + 1,
 * the design before, costs a failed put and a consistent read per collision: 2.4 puts per append
 * at 16 writers, 5.2 at 40. Per-writer sequences merged on read need a sealed order that readers
 * agree on, which takes a writer of its own.)
 *
 * What the counter changes for readers: a number can be taken before its item lands. `list` hands
 * out only the gap-free prefix, so n + 1 is never shown before n; a number whose item has not
 * landed while later ones have, for FILL_AFTER_MS by the later item's clock, belongs to a writer
 * that stopped (or to a counter update the SDK sent twice), and the reader fills it with a
 * `run.resumed` event saying so, by a conditional put: the stopped writer's put, should it land
 * after all, fails its condition and that writer appends again at a new number. Numbers are
 * therefore each used once, and readers that agree on a prefix agree on it forever. Each item
 * names its writer, so a put the SDK sends again after its answer was lost finds its own item
 * and does not append twice.
 *
 * The terminal event closes the log in the same counter update that gives it its number (later
 * appends are refused by the update's condition, so the terminal event stays last); its number is
 * kept on the counter (`closedAt`), never filled by readers, and written again by whoever ends the
 * run again if its writer stopped before writing it.
 *
 * Appends from one process to one run are queued and written together (group commit): parallel
 * executors in one process share one counter update and one put, and each caller's events keep
 * their order. The queue is drained from the next turn of the event loop, so appends made in one
 * turn share a put too.
 */
export class EventLog implements RunEvents {
  private readonly queues = new Map<string, Pending[]>();
  private readonly fillAfterMs: number;

  constructor(
    private readonly table: Table,
    private readonly retentionDays: number,
    options: { fillAfterMs?: number } = {},
  ) {
    this.fillAfterMs = options.fillAfterMs ?? FILL_AFTER_MS;
  }

  /**
   * Appends events after the ones already there; [] once the log is closed (the run has ended).
   * `reopen`: write even after the terminal event (a failed run resumed); the log is open again.
   */
  append(runId: string, bodies: EventBody[], options: { close?: boolean; reopen?: boolean; key?: string } = {}): Promise<RunEvent[]> {
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
            const pending = {
              bodies: part,
              close: (options.close ?? false) && i === parts.length - 1,
              reopen: options.reopen ?? false,
              key: options.key,
              resolve,
              reject,
            };
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
    const queue = this.queues.get(runId) ?? [];
    while (queue.length > 0) {
      const batch = takeBatch(queue);
      try {
        const bodies = batch.flatMap((p) => p.bodies);
        const close = batch.some((p) => p.close);
        const written = await this.write(runId, bodies, { close, reopen: batch.some((p) => p.reopen), key: batch[0].key });
        let seq = written?.first ?? 0;
        for (const p of batch)
          p.resolve(written === undefined ? [] : p.bodies.map((body) => ({ ...body, seq: seq++, at: written.at }) as RunEvent));
      } catch (error) {
        for (const p of batch) p.reject(error);
      }
    }
    this.queues.delete(runId);
  }

  /**
   * Takes numbers for the events and puts them in one item there; returns the first number, or
   * undefined if the log is closed (or, with a key, the append was written before). A keyed append
   * records the number it takes under the key first and the item carries the key, so a crash
   * between the two leaves a record that points at an item that is not the key's: the retry appends.
   */
  private async write(
    runId: string,
    bodies: EventBody[],
    options: { close: boolean; reopen: boolean; key?: string },
  ): Promise<{ first: number; at: string } | undefined> {
    const { close, reopen, key } = options;
    if (key !== undefined && (await this.appendedBefore(runId, key))) return undefined;
    for (let attempt = 0; ; attempt++) {
      const first = await this.take(runId, bodies.length, { close, reopen });
      if (first === undefined) return close ? this.writeLostClose(runId, bodies) : undefined;
      const at = new Date().toISOString();
      if (key !== undefined)
        await this.table.putItem({ Item: { ...keys.eventKey(runId, key), first, ttl: expiresAt(this.retentionDays) } });
      // The item names its writer: a put the SDK sent again after its answer was lost finds its own item there.
      const writer = randomBytes(9).toString("base64url");
      if (await this.putItem(runId, first, bodies, at, { close, key, writer })) return { first, at };
      const there = await this.itemAt(runId, first);
      if (there?.writer === writer) return { first, at };
      // The number is used: a reader filled it (this writer was too slow), or the log was written by
      // the version before the counter. Where the terminal event was written instead, the log is closed.
      if (close && there?.closed === true) return undefined;
      if (attempt >= 5) throw new Error(`event log of ${runId}: no free number after ${attempt + 1} attempts`);
      await this.catchUp(runId, close ? first : undefined);
    }
  }

  /**
   * Takes `count` numbers from the counter (one UpdateItem); returns the first, or undefined if the
   * log is closed. Closing records the terminal append's number; reopening clears it.
   */
  private async take(runId: string, count: number, options: { close: boolean; reopen: boolean }): Promise<number | undefined> {
    const sets = ["#seq = if_not_exists(#seq, :zero) + :count", "#ttl = :ttl"];
    if (options.close) sets.push("#closed = :true", "#closedAt = if_not_exists(#seq, :zero) + :one");
    const update = `SET ${sets.join(", ")}${options.reopen && !options.close ? " REMOVE #closed, #closedAt" : ""}`;
    const condition = options.reopen ? undefined : "attribute_not_exists(#closed)";
    const updated = await ifConditionHolds(
      this.table.updateItem({
        Key: keys.eventCounter(runId),
        UpdateExpression: update,
        ConditionExpression: condition,
        ExpressionAttributeNames: namesIn(update, condition ?? ""),
        ExpressionAttributeValues: {
          ":zero": 0,
          ":count": count,
          ":ttl": expiresAt(this.retentionDays),
          ...(options.close ? { ":true": true, ":one": 1 } : {}),
        },
        ReturnValues: "UPDATED_NEW",
      }),
    );
    if (!updated) return undefined;
    return Number(updatedItem(updated).seq) - count + 1;
  }

  /** Puts one item at `first` if no item is there; false if one is. */
  private async putItem(
    runId: string,
    first: number,
    bodies: EventBody[],
    at: string,
    options: { close?: boolean; key?: string; writer?: string } = {},
  ): Promise<boolean> {
    const written = await ifConditionHolds(
      this.table.putItem({
        Item: {
          ...keys.event(runId, first),
          events: bodies.map((body, i) => ({ ...body, seq: first + i, at })),
          ...(options.key !== undefined ? { dedupeKey: options.key } : {}),
          ...(options.close ? { closed: true } : {}),
          ...(options.writer !== undefined ? { writer: options.writer } : {}),
          ttl: expiresAt(this.retentionDays),
        },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
    return written !== undefined;
  }

  private async itemAt(runId: string, first: number): Promise<Record<string, unknown> | undefined> {
    const { Item } = await this.table.getItem({
      Key: keys.event(runId, first),
      ConsistentRead: true,
      ProjectionExpression: "sk, #closed, #writer",
      ExpressionAttributeNames: { "#closed": "closed", "#writer": "writer" },
    });
    return Item;
  }

  /**
   * The log is closed, and an append closes it again (the run is ended a second time: a retried
   * step, or the execution's end reconciled): if the terminal append's writer stopped before
   * writing it, these events take its place, and the counter ends with them.
   */
  private async writeLostClose(runId: string, bodies: EventBody[]): Promise<{ first: number; at: string } | undefined> {
    const counter = await this.counter(runId);
    const closedAt = counter?.closedAt;
    if (typeof closedAt !== "number" || (await this.itemAt(runId, closedAt))) return undefined;
    const at = new Date().toISOString();
    if (!(await this.putItem(runId, closedAt, bodies, at, { close: true }))) return undefined;
    const last = closedAt + bodies.length - 1;
    if (last !== counter?.seq) await this.updateCounter(runId, "SET #seq = :last", "#closedAt = :at", { ":last": last, ":at": closedAt });
    return { first: closedAt, at };
  }

  /**
   * After a put found its number used: if the log's items go further than its counter (a log the
   * version before the counter wrote, which had none), the counter moves to their end, closed if
   * they are. `ownClose`: the number this writer closed the counter at, undone so it can take again.
   */
  private async catchUp(runId: string, ownClose?: number): Promise<void> {
    const last = await this.lastItem(runId);
    const end = eventsOf(last).at(-1)?.seq ?? 0;
    const closed = last?.closed === true || TERMINAL_EVENTS.has(eventsOf(last).at(-1)?.type ?? "");
    const counter = await this.counter(runId);
    if (counter && counter.seq >= end) {
      if (ownClose !== undefined) await this.updateCounter(runId, "REMOVE #closed, #closedAt", "#closedAt = :at", { ":at": ownClose });
      return;
    }
    await this.updateCounter(
      runId,
      closed ? "SET #seq = :end, #closed = :true, #closedAt = :at" : "SET #seq = :end REMOVE #closed, #closedAt",
      "attribute_not_exists(#seq) OR #seq < :end",
      { ":end": end, ...(closed ? { ":true": true, ":at": eventsOf(last)[0].seq } : {}) },
    );
  }

  /** A conditional change of the counter (repairs only: appends take numbers with `take`); false if the condition failed. */
  private async updateCounter(runId: string, update: string, condition: string, values: Record<string, unknown>): Promise<boolean> {
    const written = await ifConditionHolds(
      this.table.updateItem({
        Key: keys.eventCounter(runId),
        UpdateExpression: update,
        ConditionExpression: condition,
        ExpressionAttributeNames: namesIn(update, condition),
        ExpressionAttributeValues: values,
      }),
    );
    return written !== undefined;
  }

  private async counter(runId: string): Promise<{ seq: number; closed: boolean; closedAt?: number } | undefined> {
    const { Item } = await this.table.getItem({ Key: keys.eventCounter(runId), ConsistentRead: true });
    return Item
      ? {
          seq: Number(Item.seq ?? 0),
          closed: Item.closed === true,
          closedAt: typeof Item.closedAt === "number" ? Item.closedAt : undefined,
        }
      : undefined;
  }

  private async lastItem(runId: string): Promise<Record<string, unknown> | undefined> {
    const { Items = [] } = await this.table.query({
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": keys.eventsPk(runId), ":prefix": keys.eventPrefix },
      ScanIndexForward: false,
      Limit: 1,
      ConsistentRead: true,
    });
    return Items[0];
  }

  /** Whether the item the key's record points at is the key's own (the keyed append was written). */
  private async appendedBefore(runId: string, key: string): Promise<boolean> {
    const { Item: taken } = await this.table.getItem({ Key: keys.eventKey(runId, key), ConsistentRead: true });
    if (typeof taken?.first !== "number") return false;
    const { Item: at } = await this.table.getItem({
      Key: keys.event(runId, taken.first),
      ConsistentRead: true,
      ProjectionExpression: "dedupeKey",
    });
    return at?.dedupeKey === key;
  }

  /**
   * Fills every number taken and never written, at once: for a restart, when no writer is running
   * (readers fill such a number only once later events are FILL_AFTER_MS old). `taken`: the last
   * number an older version took from a counter on the run itself.
   */
  async fillLost(runId: string, taken = 0): Promise<void> {
    const last = Math.max(taken, (await this.tip(runId)).seq);
    if (last === 0) return;
    const items = await this.table.queryPrefix<Record<string, unknown>>(keys.eventsPk(runId), keys.eventPrefix);
    const written = new Set(items.flatMap((item) => eventsOf(item).map((e) => e.seq)));
    for (let seq = 1; seq <= last; seq++) {
      if (!written.has(seq)) await this.putItem(runId, seq, [LOST_EVENT], new Date().toISOString());
    }
  }

  /**
   * The log's last number taken and whether it is closed, from its counter. A log closed by a
   * terminal append that was never written reads as open, before that append's number, so whoever
   * ends the run again writes it. A log without a counter (written before it) is read from its last item.
   */
  async tip(runId: string): Promise<LogTip> {
    const counter = await this.counter(runId);
    if (!counter) {
      const last = await this.lastItem(runId);
      const events = eventsOf(last);
      return { seq: events.at(-1)?.seq ?? 0, closed: last?.closed === true || TERMINAL_EVENTS.has(events.at(-1)?.type ?? "") };
    }
    if (!counter.closed || counter.closedAt === undefined) return { seq: counter.seq, closed: counter.closed };
    return (await this.itemAt(runId, counter.closedAt)) ? { seq: counter.seq, closed: true } : { seq: counter.closedAt - 1, closed: false };
  }

  /**
   * Events with seq greater than `after`, in order, with no gap: the events up to the first number
   * whose item has not landed. A number missing for FILL_AFTER_MS while later ones are written is
   * filled (see the class), and the listing goes on past it.
   */
  async list(runId: string, after = 0, limit = 100): Promise<RunEvent[]> {
    const listed: RunEvent[] = [];
    for (let round = 0; listed.length < limit; round++) {
      const from = listed.at(-1)?.seq ?? after;
      const { events, missing } = await this.listFrom(runId, from, limit - listed.length);
      listed.push(...events);
      if (!missing || round >= 10 || Date.now() - Date.parse(missing.laterAt) < this.fillAfterMs) break;
      // Numbers `missing.from` … `missing.to` were taken long before a later event was written, and
      // nothing came: fill them in order (the first missing number after a whole prefix starts a
      // taken range, so a fill never lands inside another writer's item). A fill that finds the
      // number written after all stops, and the listing reads again.
      for (let seq = missing.from; seq <= missing.to; seq++) {
        if (!(await this.putItem(runId, seq, [LOST_EVENT], new Date().toISOString()))) break;
      }
    }
    return listed;
  }

  /** One listing of the items after `after`: the gap-free events, and the first gap if one stops them. */
  private async listFrom(
    runId: string,
    after: number,
    limit: number,
  ): Promise<{ events: RunEvent[]; missing?: { from: number; to: number; laterAt: string } }> {
    const events: RunEvent[] = [];
    let next = after + 1;
    // The item holding `after + 1` starts at most MAX_EVENTS_PER_ITEM - 1 numbers before it.
    let exclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await this.table.query({
        KeyConditionExpression: "pk = :pk AND sk BETWEEN :from AND :to",
        ExpressionAttributeValues: {
          ":pk": keys.eventsPk(runId),
          ":from": keys.eventSk(Math.max(0, after - MAX_EVENTS_PER_ITEM + 1)),
          ":to": `${keys.eventPrefix}~`,
        },
        ExclusiveStartKey: exclusiveStartKey,
        Limit: Math.ceil(limit / 2) + 1,
        ConsistentRead: true,
      });
      for (const item of page.Items ?? []) {
        for (const event of eventsOf(item)) {
          if (event.seq < next) continue;
          if (event.seq > next) return { events: events.slice(0, limit), missing: { from: next, to: event.seq - 1, laterAt: event.at } };
          events.push(event);
          next++;
        }
      }
      exclusiveStartKey = page.LastEvaluatedKey;
    } while (exclusiveStartKey && events.length < limit);
    return { events: events.slice(0, limit) };
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
  let current: EventBody[] = [];
  const parts = [current];
  let bytes = 0;
  for (const body of bodies) {
    const size = Buffer.byteLength(JSON.stringify(body));
    if (current.length > 0 && (current.length >= MAX_EVENTS_PER_ITEM || bytes + size > MAX_ITEM_BYTES)) {
      current = [];
      parts.push(current);
      bytes = 0;
    }
    current.push(body);
    bytes += size;
  }
  return parts;
}

/** As many queued appends as fit one item (whole appends; one too big for an item goes alone). */
function takeBatch(queue: Pending[]): Pending[] {
  const first = queue.shift();
  if (!first) return [];
  const batch = [first];
  if (first.key !== undefined) return batch; // a keyed append goes alone
  let count = first.bodies.length;
  let bytes = Buffer.byteLength(JSON.stringify(first.bodies));
  let last = first;
  while (queue.length > 0 && !last.close) {
    const next = queue[0];
    if (next.key !== undefined) break;
    const size = Buffer.byteLength(JSON.stringify(next.bodies));
    if (count + next.bodies.length > MAX_EVENTS_PER_ITEM || bytes + size > MAX_ITEM_BYTES) break;
    queue.shift();
    batch.push(next);
    last = next;
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
    if (typeof value === "string" && utf8Bytes(value) > MAX_EVENT_TEXT_BYTES) {
      changed ??= { ...data };
      changed[field] =
        `${cutToBytes(value, MAX_EVENT_TEXT_BYTES)}… [${utf8Bytes(value) - MAX_EVENT_TEXT_BYTES} more bytes, kept with the run]`;
    }
  }
  const args = data.arguments === undefined ? undefined : JSON.stringify(data.arguments);
  if (args !== undefined && utf8Bytes(args) > MAX_EVENT_TEXT_BYTES) {
    changed ??= { ...data };
    changed.arguments = `${cutToBytes(args, MAX_EVENT_TEXT_BYTES)}… [arguments cut]`;
  }
  return changed ? ({ ...body, data: changed } as EventBody) : body;
}
