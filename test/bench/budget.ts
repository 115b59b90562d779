/**
 * `npm run bench -- budget`: what budgets write. The model calls of a run go through withBudget
 * (shared/budget/reservation.ts) on the spend ledger on dynalite, against a model that answers at
 * once; every DynamoDB request the ledger sends is counted, with the capacity it reports. Printed
 * per model call, with no budget, a run budget, and a run budget with the tenant's day and month.
 * Usage accounting (the run's usage counters) is the same in each case and is not counted here.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { connectTable } from "../../functions/awsClients.js";
import { ensureTable, startDynamo } from "../../infra/local/dynamo.js";
import { withBudget } from "../../shared/budget/reservation.js";
import type { RunBudget } from "../../shared/contracts/budget.js";
import type { ChatModel } from "../../shared/llm/types.js";
import { SpendStore } from "../../shared/store/spend.js";
import { TEST_CREDENTIALS } from "../support/dynalite.js";

const CALLS = Number(process.env.BENCH_BUDGET_CALLS ?? 200);

const instant: ChatModel = {
  name: "offline",
  complete: async () => ({ content: "ok", toolCalls: [], finishReason: "stop", usage: { promptTokens: 120, completionTokens: 30 } }),
};

export async function benchBudget(): Promise<void> {
  const dynamo = await startDynamo({ credentials: TEST_CREDENTIALS });
  const config = { endpoint: dynamo.endpoint, region: "us-east-1", credentials: TEST_CREDENTIALS };
  const table = connectTable("bench-budget", config);
  try {
    await ensureTable(new DynamoDBClient(config), "bench-budget");
    const requests = new Map<string, number>();
    (await table.client()).middlewareStack.add(
      (next, context) => async (args) => {
        const name = String(context.commandName ?? "?").replace(/Command$/, "");
        requests.set(name, (requests.get(name) ?? 0) + 1);
        return next(args);
      },
      { step: "initialize", name: "countBudgetRequests" },
    );
    const cases: [string, RunBudget | undefined][] = [
      ["no budget", undefined],
      ["run budget", { tokens: 10_000_000, onExhausted: "pause" }],
      ["run + day", { tokens: 10_000_000, onExhausted: "pause", day: { tokens: 100_000_000 } }],
      ["run + day + month", { tokens: 10_000_000, onExhausted: "pause", day: { tokens: 100_000_000 }, month: { tokens: 1_000_000_000 } }],
      ["day only", { onExhausted: "deliver", day: { tokens: 100_000_000 } }],
    ];
    console.log(`\nBudgets: DynamoDB requests of the spend ledger per model call (${CALLS} calls each, model answers at once)`);
    for (const [label, budget] of cases) {
      requests.clear();
      const runId = `run_${label.replace(/\W+/g, "_")}`;
      const model = withBudget(instant, { spend: new SpendStore(table), settings: {} }, async () => ({ runId, tenantId: "bench", budget }));
      const started = performance.now();
      for (let i = 0; i < CALLS; i++) await model.complete({ messages: [{ role: "user", content: "Compute 2+2" }], role: "react" });
      const ms = (performance.now() - started) / CALLS;
      const writes = requests.get("UpdateItem") ?? 0;
      const other = [...requests].filter(([name]) => name !== "UpdateItem").map(([name, n]) => `${name} ${(n / CALLS).toFixed(2)}`);
      console.log(
        `  ${label.padEnd(18)} ${(writes / CALLS).toFixed(2)} writes/call (conditional reserve + settle per limited counter)${other.length ? `, ${other.join(", ")}` : ""}; ${ms.toFixed(2)} ms/call on dynalite`,
      );
    }
    console.log("  Each counter is its own item of a few dozen bytes: one write unit per write, whatever the tenant's number of runs.");
  } finally {
    (await table.client()).destroy();
    await dynamo.close();
  }
}
