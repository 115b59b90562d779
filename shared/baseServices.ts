import type { Ports } from "./ports/index.js";
import type { Table } from "./store/table.js";

/**
 * What every handler needs: the run's records in the table, its files, the notification queue and
 * the executions. No model and no tools: a function that runs no agent builds only this, and its
 * bundle carries neither the model client nor the tools' libraries (functions/baseServices.ts wires
 * it, functions/services.ts adds them).
 */
export interface BaseServices extends Omit<Ports, "model" | "tools" | "toolSources"> {
  table: Table;
}
