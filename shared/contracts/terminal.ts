import type { EventType } from "./events.js";
import type { RunStatus } from "./run.js";

/**
 * How a run ends, as plain values without zod: the web console bundles them (and the API client
 * that uses them) without the schemas.
 */
export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set<RunStatus>([
  "succeeded",
  "failed",
  "cancelled",
  "timed_out",
  "interrupted",
  "blocked",
  "budget_exhausted",
]);
export const TERMINAL_EVENTS: ReadonlySet<string> = new Set<EventType>([
  "run.succeeded",
  "run.failed",
  "run.cancelled",
  "run.timed_out",
  "run.interrupted",
  "run.blocked",
  "run.budget_exhausted",
]);
