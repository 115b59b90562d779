import { QueryCommand, type QueryCommandInput, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { RunRecord } from "../contracts/run.js";
import { cursorAt, type Listings, type Page, positionOf, type RunQuery, type SessionSummary } from "../ports/listings.js";
import { keys } from "./keys.js";
import { itemData, type Table } from "./table.js";

/**
 * Newest-first listings of a tenant's runs and sessions, each one DynamoDB Query on a global
 * secondary index (never a Scan). The run item carries its own index keys; a session is listed by
 * its META item, touched when a run joins it. Status and session filters apply within the Query.
 * One index: CloudFormation adds one index per table update, so a deployed table upgrades in one go.
 *
 * byTenant: listPk = TENANT#<t>#RUNS | TENANT#<t>#SESSIONS, listSk = <createdAt>#<id>
 */
export const TABLE_INDEXES = [{ indexName: "byTenant", partitionKey: "listPk", sortKey: "listSk" }] as const;

export class ListingStore implements Listings {
  constructor(private readonly table: Table) {}

  async runs(tenantId: string, options: RunQuery): Promise<Page<RunRecord>> {
    const pkValue = keys.runsListPk(tenantId);
    const after = options.cursor === undefined ? undefined : positionOf(options.cursor);
    const filters = {
      ...(options.status ? { status: options.status } : {}),
      ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    };
    const names = Object.keys(filters);
    const items = await this.query(
      {
        IndexName: "byTenant",
        KeyConditionExpression: options.since === undefined ? "listPk = :pk" : "listPk = :pk AND listSk >= :since",
        ...(names.length
          ? {
              FilterExpression: names.map((n) => `#${n} = :${n}`).join(" AND "),
              ExpressionAttributeNames: Object.fromEntries(names.map((n) => [`#${n}`, n])),
            }
          : {}),
        ExpressionAttributeValues: {
          ":pk": pkValue,
          ...(options.since === undefined ? {} : { ":since": options.since }),
          ...Object.fromEntries(Object.entries(filters).map(([n, v]) => [`:${n}`, v])),
        },
      },
      after === undefined ? undefined : keys.runAfter(tenantId, after),
      options.limit,
    );
    return {
      items: items.items.map((item) => RunRecord.parse(itemData(item, "eventSeq"))),
      ...(items.last ? { nextCursor: cursorAt(keys.listingPositionOf(items.last)) } : {}),
    };
  }

  async sessions(tenantId: string, options: { limit: number; cursor?: string }): Promise<Page<SessionSummary>> {
    const pkValue = keys.sessionsListPk(tenantId);
    const after = options.cursor === undefined ? undefined : positionOf(options.cursor);
    const items = await this.query(
      { IndexName: "byTenant", KeyConditionExpression: "listPk = :pk", ExpressionAttributeValues: { ":pk": pkValue } },
      after === undefined ? undefined : keys.sessionAfter(tenantId, after),
      options.limit,
    );
    return {
      items: items.items.map((item) => ({
        sessionId: String(item.sessionId),
        ...(typeof item.title === "string" ? { title: item.title } : {}),
        createdAt: String(item.createdAt),
        updatedAt: String(item.updatedAt),
        lastRunId: String(item.lastRunId),
      })),
      ...(items.last ? { nextCursor: cursorAt(keys.listingPositionOf(items.last)) } : {}),
    };
  }

  async touchSession(tenantId: string, sessionId: string, runId: string, createdAt: string): Promise<void> {
    const listing = keys.sessionListing(tenantId, createdAt, sessionId);
    await this.table.doc.send(
      new UpdateCommand({
        TableName: this.table.name,
        Key: keys.session(tenantId, sessionId),
        UpdateExpression:
          "SET sessionId = :sid, lastRunId = :run, updatedAt = :now, createdAt = if_not_exists(createdAt, :now), listPk = :lpk, listSk = if_not_exists(listSk, :lsk)",
        ExpressionAttributeValues: { ":sid": sessionId, ":run": runId, ":now": createdAt, ":lpk": listing.listPk, ":lsk": listing.listSk },
      }),
    );
  }

  /**
   * Up to `limit` items after `start`, newest first. A filter may leave a DynamoDB page short, so
   * this reads on until it has `limit` items or the index ends. The cursor is the last item
   * returned (not DynamoDB's LastEvaluatedKey, which may lie past items we did not return).
   */
  private async query(
    input: Omit<QueryCommandInput, "TableName" | "ScanIndexForward" | "Limit" | "ExclusiveStartKey">,
    start: Record<string, unknown> | undefined,
    limit: number,
  ): Promise<{ items: Record<string, unknown>[]; last?: string }> {
    const items: Record<string, unknown>[] = [];
    let exclusiveStartKey = start;
    let more = true;
    let dropped = false;
    while (more && items.length < limit) {
      const page = await this.table.doc.send(
        new QueryCommand({
          ...input,
          TableName: this.table.name,
          ScanIndexForward: false,
          Limit: limit - items.length + (input.FilterExpression ? 10 : 0),
          ExclusiveStartKey: exclusiveStartKey,
        }),
      );
      for (const item of page.Items ?? []) {
        if (items.length < limit) items.push(item);
        else dropped = true;
      }
      exclusiveStartKey = page.LastEvaluatedKey;
      more = exclusiveStartKey !== undefined;
    }
    // A full page may have more behind it; the last page says so by having no cursor.
    const hasMore = items.length === limit && (more || dropped);
    const last = items.at(-1);
    return { items, ...(hasMore && last ? { last: String(last.listSk) } : {}) };
  }
}
