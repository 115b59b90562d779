// Preloaded into the benchmarked stack's process (`node --import`): counts the HTTP requests the
// process sends to each local port (dynalite's port = DynamoDB requests at the endpoint; counted
// where they are sent, since dynalite serves them from a thread of its own) and answers the
// bench's IPC question "probe" with those counts, the process's CPU time (all threads), the time
// its main thread was busy (where the handlers, the API and the interpreter all run) and its peak RSS.
import { subscribe } from "node:diagnostics_channel";
import { ClientRequest } from "node:http";
import { performance } from "node:perf_hooks";

const requestsByPort = new Map<number, number>();
/** DynamoDB requests by operation (the X-Amz-Target header: "DynamoDB_20120810.PutItem"). */
const operations = new Map<string, number>();
/** Step Functions API requests by action (X-Amz-Target "AWSStepFunctions.GetExecutionHistory"). */
const sfnActions = new Map<string, number>();

/**
 * Writes to the records the listing index holds (a run's META item, a session's), which write the
 * index too: read from the request body, which the SDK hands to `end`.
 */
const listingWrites = { runs: 0, sessions: 0 };
const WRITES = new Set(["PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"]);
const end = ClientRequest.prototype.end;
ClientRequest.prototype.end = function (this: ClientRequest, ...args: unknown[]) {
  const target = this.getHeader("x-amz-target");
  const body = args[0];
  if (typeof target === "string" && WRITES.has(target.split(".")[1] ?? "") && (typeof body === "string" || body instanceof Uint8Array)) {
    for (const [, pk] of Buffer.from(body)
      .toString("utf8")
      .matchAll(/"pk":\{"S":"(RUN#[^"#]+|SESSION#[^"]+)"\},"sk":\{"S":"META"\}/g))
      if (pk?.startsWith("RUN#")) listingWrites.runs++;
      else listingWrites.sessions++;
  }
  return end.apply(this, args as Parameters<typeof end>);
} as typeof end;

subscribe("http.client.request.start", (message) => {
  const { request } = message as { request: ClientRequest };
  const port = Number(String(request.getHeader("host") ?? "").split(":")[1]);
  if (port) requestsByPort.set(port, (requestsByPort.get(port) ?? 0) + 1);
  const target = request.getHeader("x-amz-target");
  if (typeof target === "string" && target.startsWith("DynamoDB_")) {
    const operation = target.split(".")[1] ?? target;
    operations.set(operation, (operations.get(operation) ?? 0) + 1);
  }
  if (typeof target === "string" && target.startsWith("AWSStepFunctions.")) {
    const action = target.slice("AWSStepFunctions.".length);
    sfnActions.set(action, (sfnActions.get(action) ?? 0) + 1);
  }
});

export interface ProbeReading {
  requestsByPort: Record<number, number>;
  operations: Record<string, number>;
  sfnActions: Record<string, number>;
  /** Writes to runs' and sessions' records, each of which writes the listing index. */
  listingWrites: { runs: number; sessions: number };
  cpuMs: number;
  mainThreadBusyMs: number;
  maxRssMiB: number;
  rssMiB: number;
}

process.on("message", (message) => {
  if (message !== "probe") return;
  const cpu = process.cpuUsage();
  const reading: ProbeReading = {
    requestsByPort: Object.fromEntries(requestsByPort),
    operations: Object.fromEntries(operations),
    sfnActions: Object.fromEntries(sfnActions),
    listingWrites: { ...listingWrites },
    cpuMs: (cpu.user + cpu.system) / 1000,
    mainThreadBusyMs: performance.eventLoopUtilization().active,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    rssMiB: process.memoryUsage().rss / 1024 / 1024,
  };
  process.send?.({ probe: reading });
});
