import type { RunRecord } from "../contracts/run.js";
import {
  cursorAt,
  type ListingPosition,
  type Listings,
  type Page,
  positionOf,
  type RunQuery,
  type SessionSummary,
} from "../ports/listings.js";
import { stored } from "./clone.js";
import type { MemoryRuns } from "./memoryRuns.js";

/** Newest first: by creation, then by id (as the adapter's index sorts). */
const newestFirst = (a: ListingPosition, b: ListingPosition) =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) : a.createdAt < b.createdAt ? 1 : -1;

/** A page of positioned items after `cursor`. */
function pageOf<T>(all: { position: ListingPosition; item: T }[], limit: number, cursor?: string): Page<T> {
  const after = cursor === undefined ? undefined : positionOf(cursor);
  const sorted = all.sort((a, b) => newestFirst(a.position, b.position));
  const rest = after ? sorted.filter(({ position }) => newestFirst(after, position) < 0) : sorted;
  const page = rest.slice(0, limit);
  const last = page.at(-1);
  return { items: stored(page.map(({ item }) => item)), ...(rest.length > limit && last ? { nextCursor: cursorAt(last.position) } : {}) };
}

/** The listings port in memory: the runs the runs fake holds, and the sessions touched. */
export class MemoryListings implements Listings {
  private readonly sessionSummaries = new Map<string, { tenantId: string; summary: SessionSummary }>();

  constructor(private readonly runsFake: MemoryRuns) {}

  async runs(tenantId: string, { status, sessionId, since, limit, cursor }: RunQuery): Promise<Page<RunRecord>> {
    const mine = [...this.runsFake.records.values()].filter(
      (run) =>
        run.tenantId === tenantId &&
        (!status || run.status === status) &&
        (!sessionId || run.sessionId === sessionId) &&
        (!since || run.createdAt >= since),
    );
    return pageOf(
      mine.map((run) => ({ position: { createdAt: run.createdAt, id: run.runId }, item: run })),
      limit,
      cursor,
    );
  }

  async sessions(tenantId: string, { limit, cursor }: { limit: number; cursor?: string }): Promise<Page<SessionSummary>> {
    const mine = [...this.sessionSummaries.values()].filter((session) => session.tenantId === tenantId);
    return pageOf(
      mine.map(({ summary }) => ({ position: { createdAt: summary.createdAt, id: summary.sessionId }, item: summary })),
      limit,
      cursor,
    );
  }

  async touchSession(tenantId: string, sessionId: string, runId: string, createdAt: string): Promise<void> {
    const key = JSON.stringify([tenantId, sessionId]);
    const first = this.sessionSummaries.get(key)?.summary.createdAt ?? createdAt;
    this.sessionSummaries.set(key, { tenantId, summary: { sessionId, createdAt: first, updatedAt: createdAt, lastRunId: runId } });
  }
}
