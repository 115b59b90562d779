// Runs the offline model on its own, for poking at it with curl or a client:
//   PORT=8787 LATENCY_MS=200 npx tsx infra/offlineModel/cli.ts

import { startOfflineModel } from "./server.js";

const model = await startOfflineModel({
  port: Number(process.env.PORT ?? 8787),
  latencyMs: Number(process.env.LATENCY_MS ?? 0),
});
console.log(`Offline model listening at ${model.url}`);
