import type { QueryCommandInput } from "@aws-sdk/lib-dynamodb";
import { RunRecord } from "../contracts/run.js";
import { cursorAt, type Listings, type Page, positionOf, type RunQuery, type SessionSummary } from "../ports/listings.js";
import { keys } from "./keys.js";
import { itemData, type Table } from "./table.js";

/**
 * Newest-first listings of a tenant's runs and sessions, read from a global secondary index (never
 * a Scan). The run item carries its own index keys; a session is listed by its META item, touched
 * when a run joins it. Status and session filters apply within the Query. One index:
 * CloudFormation adds one index per table update, so a deployed table upgrades in one go.
 *
 * A tenant's runs, and its sessions, are spread over shards (keys.ts, LISTING_SHARDS), so that one
 * tenant's runs in flight do not write one index partition past its 1,000 writes/s. A listing
 * reads every shard, and the partition written before sharding, at once and merges them newest
 * first. One position, the last item returned, is where every partition goes on from: sort keys
 * are unique across partitions, so it holds each shard's position (and cursors given out before
 * sharding still work).
 *
 * byTenant: listPk = TENANT#<t>#RUNS#<shard> | TENANT#<t>#SESSIONS#<shard>, listSk = <createdAt>#<id>
 */
export const TABLE_INDEXES = [{ indexName: "byTenant", partitionKey: "listPk", sortKey: "listSk" }] as const;

/** How far apart two functions' clocks may be when one stamps a session and the other its later run. */
const CLOCK_MARGIN_MS = 5 * 60_000;

export class ListingStore implements Listings {
  constructor(private readonly table: Table) {}

  async runs(tenantId: string, options: RunQuery): Promise<Page<RunRecord>> {
    const since = maxDefined(options.since, options.sessionId ? await this.sessionStart(tenantId, options.sessionId) : undefined);
    const filters = {
      ...(options.status ? { status: options.status } : {}),
      ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    };
    const page = await this.merged(keys.runsListPks(tenantId), { ...options, since, filters });
    return {
      items: page.items.map((item) => RunRecord.parse(itemData(item, "eventSeq"))),
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    };
  }

  async sessions(tenantId: string, options: { limit: number; cursor?: string }): Promise<Page<SessionSummary>> {
    const page = await this.merged(keys.sessionsListPks(tenantId), { ...options, filters: {} });
    return {
      items: page.items.map((item) => ({
        sessionId: String(item.sessionId),
        ...(typeof item.title === "string" ? { title: item.title } : {}),
        createdAt: String(item.createdAt),
        updatedAt: String(item.updatedAt),
        lastRunId: String(item.lastRunId),
      })),
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    };
  }

  /** Moves a session listed before sharding into its shard, keeping its place (`listSk`). */
  async touchSession(tenantId: string, sessionId: string, runId: string, createdAt: string): Promise<void> {
    const listing = keys.sessionListing(tenantId, createdAt, sessionId);
    await this.table.updateItem({
      Key: keys.session(tenantId, sessionId),
      UpdateExpression:
        "SET sessionId = :sid, lastRunId = :run, updatedAt = :now, createdAt = if_not_exists(createdAt, :now), listPk = :lpk, listSk = if_not_exists(listSk, :lsk)",
      ExpressionAttributeValues: { ":sid": sessionId, ":run": runId, ":now": createdAt, ":lpk": listing.listPk, ":lsk": listing.listSk },
    });
  }

  /**
   * Where a session's runs begin in the listing: its record's creation (stamped when its first run
   * claimed it, before that run was created), less a margin for clocks that differ between
   * functions. Undefined for a session without one (an imported run's): then the whole index is read.
   */
  private async sessionStart(tenantId: string, sessionId: string): Promise<string | undefined> {
    const { Item } = await this.table.getItem({ Key: keys.session(tenantId, sessionId), ProjectionExpression: "createdAt" });
    const createdAt = typeof Item?.createdAt === "string" ? Date.parse(Item.createdAt) : Number.NaN;
    return Number.isNaN(createdAt) ? undefined : new Date(createdAt - CLOCK_MARGIN_MS).toISOString();
  }

  /** A page of the items of all the partitions `listPks`, newest first, created at or after `since`, that match `filters`. */
  private async merged(
    listPks: string[],
    { since, filters, limit, cursor }: { since?: string; filters: Record<string, string>; limit: number; cursor?: string },
  ): Promise<{ items: Item[]; nextCursor?: string }> {
    const before = cursor === undefined ? undefined : keys.listSkOf(positionOf(cursor));
    if (before !== undefined && since !== undefined && before < since) return { items: [] };
    const names = Object.keys(filters);
    const range =
      since !== undefined && before !== undefined
        ? " AND listSk BETWEEN :since AND :before"
        : since !== undefined
          ? " AND listSk >= :since"
          : before !== undefined
            ? " AND listSk < :before"
            : "";
    const shards = listPks.map(
      (listPk) =>
        // BETWEEN takes in its upper bound: the item the cursor names is left out where it is read.
        new ShardReader(
          this.table,
          {
            IndexName: "byTenant",
            KeyConditionExpression: `listPk = :pk${range}`,
            ...(names.length
              ? {
                  FilterExpression: names.map((n) => `#${n} = :${n}`).join(" AND "),
                  ExpressionAttributeNames: Object.fromEntries(names.map((n) => [`#${n}`, n])),
                }
              : {}),
            ExpressionAttributeValues: {
              ":pk": listPk,
              ...(since === undefined ? {} : { ":since": since }),
              ...(before === undefined ? {} : { ":before": before }),
              ...Object.fromEntries(Object.entries(filters).map(([n, v]) => [`:${n}`, v])),
            },
          },
          before,
        ),
    );
    const page = await mergeNewestFirst(shards, limit, names.length > 0);
    return { items: page.items, ...(page.last ? { nextCursor: cursorAt(keys.listingPositionOf(page.last)) } : {}) };
  }
}

type Item = Record<string, unknown>;

const maxDefined = (a: string | undefined, b: string | undefined) => (a === undefined ? b : b === undefined || a > b ? a : b);

/** One listing partition read newest first, a DynamoDB page at a time, as the merge takes its items. */
class ShardReader {
  private readonly items: Item[] = [];
  private startKey: Item | undefined;
  private ended = false;

  constructor(
    private readonly table: Table,
    private readonly input: Omit<QueryCommandInput, "TableName" | "ScanIndexForward" | "Limit" | "ExclusiveStartKey">,
    /** The sort key of the run a cursor names, which this page starts after. */
    private readonly exclude: string | undefined,
  ) {}

  get newest(): Item | undefined {
    return this.items[0];
  }

  /** Nothing held, but more in the partition. */
  get wantsRead(): boolean {
    return this.items.length === 0 && !this.ended;
  }

  get exhausted(): boolean {
    return this.ended && this.items.length === 0;
  }

  async read(count: number): Promise<void> {
    const page = await this.table.query({ ...this.input, ScanIndexForward: false, Limit: count, ExclusiveStartKey: this.startKey });
    this.items.push(...(page.Items ?? []).filter((item) => item.listSk !== this.exclude));
    this.startKey = page.LastEvaluatedKey;
    this.ended = this.startKey === undefined;
  }

  take(): Item | undefined {
    return this.items.shift();
  }
}

/**
 * Up to `limit` items of all the shards, newest first: every shard is read at once, sized for an
 * even spread, and a shard that runs dry before the page is full is read on (a filter may leave a
 * DynamoDB page short, or empty). A page has a cursor only when some shard holds more.
 */
async function mergeNewestFirst(shards: ShardReader[], limit: number, filtered: boolean): Promise<{ items: Item[]; last?: string }> {
  const items: Item[] = [];
  let count = Math.min(limit, 2 * Math.ceil(limit / shards.length) + 1);
  while (items.length < limit) {
    const dry = shards.filter((shard) => shard.wantsRead);
    if (dry.length) {
      await Promise.all(dry.map((shard) => shard.read(count + (filtered ? 10 : 0))));
      count = limit - items.length;
      continue;
    }
    let newest: ShardReader | undefined;
    for (const shard of shards)
      if (shard.newest && (!newest || String(shard.newest.listSk) > String(newest.newest?.listSk))) newest = shard;
    const item = newest?.take();
    if (!item) break;
    items.push(item);
  }
  const last = items.at(-1);
  return { items, ...(items.length === limit && last && shards.some((shard) => !shard.exhausted) ? { last: String(last.listSk) } : {}) };
}
