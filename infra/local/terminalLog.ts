import type { ExecutionStatusChange } from "./stepFunctions.js";

/**
 * What `npm start` prints while it runs: one readable line per request, per log line and per run
 * execution starting or ending, instead of the handlers' JSON (the same lines CloudWatch gets on AWS).
 * The handlers log as they always do; only the local entry point reformats its own standard output.
 * STEPWISE_LOG_FORMAT=json keeps the JSON lines, EMF metrics included.
 */

/** Keys every Powertools line carries, which say nothing to a person at a terminal. */
const QUIET_KEYS = new Set([
  "level",
  "message",
  "timestamp",
  "service",
  "sampling_rate",
  "cold_start",
  "xray_trace_id",
  "requestId",
  "function_arn",
  "function_memory_size",
  "function_name",
  "function_request_id",
  "runId",
  "error",
]);

const clock = (iso?: unknown) => {
  const date = typeof iso === "string" ? new Date(iso) : new Date();
  return Number.isNaN(date.getTime()) ? "--:--:--" : date.toTimeString().slice(0, 8);
};

const errorText = (error: unknown): string | undefined => {
  if (error === undefined || error === null) return undefined;
  if (typeof error === "string") return error;
  if (typeof error === "object" && "message" in error) return String((error as { message: unknown }).message);
  return JSON.stringify(error);
};

/** The readable form of one line of standard output; undefined to leave it out (EMF metrics). */
function readableLogLine(line: string): string | undefined {
  if (!line.startsWith("{")) return line;
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line);
  } catch {
    return line;
  }
  if ("_aws" in entry) return undefined; // an EMF metric: CloudWatch's, not a person's
  if (typeof entry.message !== "string" || typeof entry.level !== "string") return line;
  const time = clock(entry.timestamp);
  const run = typeof entry.runId === "string" ? ` ${entry.runId}` : "";
  if (entry.message === "request") {
    return `${time}  ${entry.method} ${entry.path} → ${entry.status} (${entry.ms} ms)${run}`;
  }
  const level = entry.level === "INFO" ? "" : `${entry.level} `;
  const fn = typeof entry.function_name === "string" ? ` [${entry.function_name.replace(/^steps-/, "")}]` : "";
  const details = Object.entries(entry)
    .filter(([key, value]) => !QUIET_KEYS.has(key) && value !== undefined && value !== null)
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`);
  const error = errorText(entry.error);
  return `${time}  ${level}${entry.message}${fn}${run}${details.length ? ` (${details.join(", ")})` : ""}${error ? `: ${error}` : ""}`;
}

/** One line when a run's execution starts or ends. */
export function executionLine(change: ExecutionStatusChange): string {
  let runId = change.name;
  try {
    runId = (JSON.parse(change.input) as { runId?: string }).runId ?? runId;
  } catch {
    // the execution's name then
  }
  const status = change.status.toLowerCase().replace("_", " ");
  const why = change.error ? `: ${change.error}${change.cause ? ` (${change.cause.slice(0, 200)})` : ""}` : "";
  return `${clock(change.stopDate?.toISOString() ?? change.startDate.toISOString())}  run ${runId} ${status === "running" ? "started" : status}${why}`;
}

/** Rewrites what is written to `stream` line by line, through readableLogLine. */
export function readableOutput(stream: NodeJS.WriteStream = process.stdout) {
  const write = stream.write.bind(stream) as (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    const lines = text.split("\n");
    const last = lines.pop();
    const kept = lines.map(readableLogLine).filter((line): line is string => line !== undefined);
    const out = kept.map((line) => `${line}\n`).join("") + (last ?? "");
    if (!out) {
      // Nothing to show; the callback still runs, as a write's would.
      const callback = rest.find((arg) => typeof arg === "function") as (() => void) | undefined;
      callback?.();
      return true;
    }
    return write(out, ...rest);
  }) as typeof stream.write;
}
