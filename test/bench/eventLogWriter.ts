// One executor of the event-log bench (eventLog.ts), in a process of its own as on AWS: the real
// EventLog against the local stack's DynamoDB endpoint, appending as an executor streaming a
// model's reply does (an `agent.delta` every DELTA_MS, a tool call and its result every few).
// Told "go" over IPC, it answers with each append's time and the requests it sent, by operation.

import { connectTable } from "../../functions/awsClients.js";
import type { EventBody } from "../../shared/contracts/events.js";
import { EventLog } from "../../shared/store/events.js";

const {
  endpoint,
  region,
  accessKeyId,
  secretAccessKey,
  table: tableName,
  runId,
  writer,
  appends,
  deltaMs,
} = JSON.parse(process.argv[2]!) as {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  table: string;
  runId: string;
  writer: string;
  appends: number;
  deltaMs: number;
};

const table = connectTable(tableName, { endpoint, region, credentials: { accessKeyId, secretAccessKey } });
const requests: Record<string, number> = {};
(await table.client()).middlewareStack.add((next, context) => async (args) => {
  requests[context.commandName ?? "?"] = (requests[context.commandName ?? "?"] ?? 0) + 1;
  return next(args);
});
const log = new EventLog(table, 1);
const source = { agent: "executor" as const, taskId: writer };

function bodiesOf(i: number): EventBody[] {
  if (i === 0) return [{ type: "task.started", data: { taskId: writer, title: writer, iteration: 1, stepIndex: 0 } }];
  if (i % 10 === 5)
    return [{ type: "tool.called", data: { ...source, callId: `${writer}-${i}`, tool: "calculator", arguments: { expression: "2+2" } } }];
  if (i % 10 === 6)
    return [{ type: "tool.result", data: { ...source, callId: `${writer}-${i - 1}`, tool: "calculator", ok: true, output: "4" } }];
  if (i === appends - 1)
    return [{ type: "task.completed", data: { taskId: writer, title: writer, iteration: 1, status: "succeeded", result: "4" } }];
  return [{ type: "agent.delta", data: { ...source, text: `${writer} part ${i} of the reply, a few words streamed at a time. ` } }];
}

process.on("disconnect", () => process.exit(0));
process.once("message", async () => {
  const latencies: number[] = [];
  // Executors do not start in the same millisecond: spread the first append over one delta period.
  await new Promise((resolve) => setTimeout(resolve, Math.random() * deltaMs));
  let next = performance.now();
  for (let i = 0; i < appends; i++) {
    const started = performance.now();
    const appended = await log.append(runId, bodiesOf(i));
    latencies.push(performance.now() - started);
    if (appended.length !== 1) throw new Error(`append ${i} of ${writer} was dropped`);
    next += deltaMs;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
  }
  process.send!({ latencies, requests }, () => process.exit(0));
});
// A warm container: its first requests (connection, SDK set-up, JIT) go to a run of its own, before the bench.
await log.append(`${runId}_warm_${writer}`, bodiesOf(0));
for (const key of Object.keys(requests)) delete requests[key];
process.send!("ready");
