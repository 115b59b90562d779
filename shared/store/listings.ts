import { QueryCommand, type QueryCommandInput, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { z } from "zod";
import { RunRecord, type RunStatus } from "../contracts/run.js";
import { BadRequestError } from "../errors.js";
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

/** A page of a listing; `nextCursor` is absent on the last page. */
export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

/** What `GET /v1/sessions` lists. */
export interface SessionSummary {
  sessionId: string;
  title?: string;
  createdAt: string;
  updatedAt: string;
  lastRunId: string;
}

/** The opaque cursor: the sort key of the last item shown, base64url JSON (clients never parse it). */
const CursorBody = z.strictObject({ k: z.string().regex(/^\d{4}-\d\d-\d\dT[\d:.]+Z#[A-Za-z0-9_-]{1,80}$/) });

function encodeCursor(listSk: string): string {
  return Buffer.from(JSON.stringify({ k: listSk })).toString("base64url");
}

function decodeCursor(cursor: string): string {
  try {
    return CursorBody.parse(JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))).k;
  } catch {
    throw new BadRequestError("cursor is not one this API gave out; start again without it.", undefined, "invalid_cursor");
  }
}

export class Listings {
  constructor(private readonly table: Table) {}

  /** The tenant's runs, newest first; optionally only one session's, or one status. */
  async runs(
    tenantId: string,
    options: { status?: RunStatus; sessionId?: string; limit: number; cursor?: string },
  ): Promise<Page<RunRecord>> {
    const pkValue = keys.runsListPk(tenantId);
    const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
    const filters = {
      ...(options.status ? { status: options.status } : {}),
      ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    };
    const names = Object.keys(filters);
    const items = await this.query(
      {
        IndexName: "byTenant",
        KeyConditionExpression: "listPk = :pk",
        ...(names.length
          ? {
              FilterExpression: names.map((n) => `#${n} = :${n}`).join(" AND "),
              ExpressionAttributeNames: Object.fromEntries(names.map((n) => [`#${n}`, n])),
            }
          : {}),
        ExpressionAttributeValues: { ":pk": pkValue, ...Object.fromEntries(Object.entries(filters).map(([n, v]) => [`:${n}`, v])) },
      },
      after === undefined ? undefined : keys.runAfter(tenantId, after),
      options.limit,
    );
    return {
      items: items.items.map((item) => RunRecord.parse(itemData(item, "eventSeq"))),
      ...(items.last ? { nextCursor: encodeCursor(items.last) } : {}),
    };
  }

  /** The tenant's sessions, newest first (by when their first run was submitted). */
  async sessions(tenantId: string, options: { limit: number; cursor?: string }): Promise<Page<SessionSummary>> {
    const pkValue = keys.sessionsListPk(tenantId);
    const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
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
      ...(items.last ? { nextCursor: encodeCursor(items.last) } : {}),
    };
  }

  /** Lists the session (once, at its first run) and records its latest run. */
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
