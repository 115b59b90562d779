import type { EventType } from "./events.js";

/**
 * A run's statuses, the one list of them, as plain values without zod: the web console bundles
 * them (and the API client that uses them) without the schemas; `RunStatus` in run.ts is this
 * list as a schema. The ones a run ends in each have their event, `run.<status>`.
 */
const ENDINGS = ["succeeded", "failed", "cancelled", "timed_out", "interrupted", "blocked", "budget_exhausted"] as const;
export const RUN_STATUSES = ["queued", "running", "awaiting_input", ...ENDINGS] as const;

export const TERMINAL_STATUSES: ReadonlySet<(typeof RUN_STATUSES)[number]> = new Set(ENDINGS);
export const TERMINAL_EVENTS: ReadonlySet<string> = new Set(ENDINGS.map((status): EventType => `run.${status}`));
