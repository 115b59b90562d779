// Preloaded into the benchmarked stack's process (`node --import`): counts the HTTP requests each
// local server receives (dynalite's port = DynamoDB requests at the endpoint) and answers the
// bench's IPC question "probe" with those counts, the process's CPU time and its peak RSS.
import { subscribe } from "node:diagnostics_channel";
import type { IncomingMessage, Server } from "node:http";
import type { AddressInfo } from "node:net";

const requestsByPort = new Map<number, number>();
/** DynamoDB requests by operation (the X-Amz-Target header: "DynamoDB_20120810.PutItem"). */
const operations = new Map<string, number>();

subscribe("http.server.request.start", (message) => {
  const { server, request } = message as { server: Server; request: IncomingMessage };
  const address = server.address() as AddressInfo | null;
  if (address) requestsByPort.set(address.port, (requestsByPort.get(address.port) ?? 0) + 1);
  const target = request.headers["x-amz-target"];
  if (typeof target === "string" && target.startsWith("DynamoDB_")) {
    const operation = target.split(".")[1] ?? target;
    operations.set(operation, (operations.get(operation) ?? 0) + 1);
  }
});

export interface ProbeReading {
  requestsByPort: Record<number, number>;
  operations: Record<string, number>;
  cpuMs: number;
  maxRssMiB: number;
  rssMiB: number;
}

process.on("message", (message) => {
  if (message !== "probe") return;
  const cpu = process.cpuUsage();
  const reading: ProbeReading = {
    requestsByPort: Object.fromEntries(requestsByPort),
    operations: Object.fromEntries(operations),
    cpuMs: (cpu.user + cpu.system) / 1000,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    rssMiB: process.memoryUsage().rss / 1024 / 1024,
  };
  process.send?.({ probe: reading });
});
