import { AsyncLocalStorage } from "node:async_hooks";
import { logger } from "./observability.js";

/** Structured log lines that always name the run (and agent scope) they belong to. */
export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** What every piece of code handling one step may know without it being passed by hand. */
export interface RequestContext {
  runId: string;
  tenantId?: string;
  scope?: string;
  log: Logger;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Lines in the Powertools format of every other log line, with these fields added. */
export function jsonLogger(fields: Record<string, unknown>): Logger {
  const defined = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  const write =
    (level: "info" | "warn" | "error") =>
    (msg: string, extra: Record<string, unknown> = {}) =>
      logger[level](msg, { ...defined, ...extra });
  return { info: write("info"), warn: write("warn"), error: write("error") };
}

/** Runs `fn` with this context; async work it starts (parallel tool calls included) inherits it. */
export function withRequestContext<T>(context: Omit<RequestContext, "log"> & { log?: Logger }, fn: () => T): T {
  const parent = storage.getStore();
  const merged = { ...parent, ...context } as RequestContext;
  merged.log = context.log ?? jsonLogger({ runId: merged.runId, tenant: merged.tenantId, scope: merged.scope });
  return storage.run(merged, fn);
}

/** The current step's context, or undefined outside a step (unit tests, scripts). */
export function currentRequest(): RequestContext | undefined {
  return storage.getStore();
}
