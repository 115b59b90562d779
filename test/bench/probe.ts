// Preloaded into the benchmarked stack's process (`node --import`): counts the HTTP requests each
// local server receives (dynalite's port = DynamoDB requests at the endpoint) and answers the
// bench's IPC question "probe" with those counts, the process's CPU time and its peak RSS.
import { subscribe } from "node:diagnostics_channel";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

const requestsByPort = new Map<number, number>();

subscribe("http.server.request.start", (message) => {
  const address = (message as { server: Server }).server.address() as AddressInfo | null;
  if (address) requestsByPort.set(address.port, (requestsByPort.get(address.port) ?? 0) + 1);
});

export interface ProbeReading {
  requestsByPort: Record<number, number>;
  cpuMs: number;
  maxRssMiB: number;
  rssMiB: number;
}

process.on("message", (message) => {
  if (message !== "probe") return;
  const cpu = process.cpuUsage();
  const reading: ProbeReading = {
    requestsByPort: Object.fromEntries(requestsByPort),
    cpuMs: (cpu.user + cpu.system) / 1000,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    rssMiB: process.memoryUsage().rss / 1024 / 1024,
  };
  process.send?.({ probe: reading });
});
