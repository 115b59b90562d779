import * as z from "zod";
import type { RunRecord, RunStatus } from "../contracts/run.js";
import { BadRequestError } from "../errors.js";

/** A page of a listing; `nextCursor` is absent on the last page (a full page may have one that leads to an empty page). */
export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

/** What `GET /v1/sessions` lists. */
export interface SessionSummary {
  sessionId: string;
  /** The session's title, once its first answered turn was titled. */
  title?: string;
  createdAt: string;
  updatedAt: string;
  lastRunId: string;
}

/** Which of a tenant's runs to list, newest first. */
export interface RunQuery {
  status?: RunStatus;
  /** Only the runs of this session. */
  sessionId?: string;
  /** Only the runs created at or after this time (ISO 8601): what the index reads stops there. */
  since?: string;
  limit: number;
  /** Where the previous page ended (its `nextCursor`). */
  cursor?: string;
}

/**
 * The listings port: a tenant's runs and sessions, newest first, a page at a time. Runs are those
 * the runs port created; a session is listed from its first run on (`touchSession`). Adapter:
 * ListingStore (DynamoDB); fake: shared/testing/memoryListings.ts; contract:
 * test/unit/shared/ports/listings.test.ts.
 */
export interface Listings {
  /** The tenant's runs, newest first (by creation; ties by run id); a cursor not given out by a listing is a BadRequestError. */
  runs(tenantId: string, query: RunQuery): Promise<Page<RunRecord>>;
  /** The tenant's sessions, newest first by when their first run was created. */
  sessions(tenantId: string, query: { limit: number; cursor?: string }): Promise<Page<SessionSummary>>;
  /** Lists the session (once, at its first run) and records its latest run. */
  touchSession(tenantId: string, sessionId: string, runId: string, createdAt: string): Promise<void>;
}

/** Where a page ended: the last item's creation time and id. */
export interface ListingPosition {
  createdAt: string;
  id: string;
}

/** The opaque cursor: base64url JSON that clients never parse. */
const CursorBody = z.strictObject({ k: z.string().regex(/^(\d{4}-\d\d-\d\dT[\d:.]+Z)#([A-Za-z0-9_-]{1,80})$/) });

export function cursorAt({ createdAt, id }: ListingPosition): string {
  return Buffer.from(JSON.stringify({ k: `${createdAt}#${id}` })).toString("base64url");
}

/** The position a cursor holds; a BadRequestError for one no listing gave out. */
export function positionOf(cursor: string): ListingPosition {
  try {
    const { k } = CursorBody.parse(JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")));
    return { createdAt: k.slice(0, k.indexOf("#")), id: k.slice(k.indexOf("#") + 1) };
  } catch {
    throw new BadRequestError("cursor is not one this API gave out; start again without it.", undefined, "invalid_cursor");
  }
}
