import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { afterAll, describe, expect, it } from "vitest";
import { health } from "../../functions/api/health.js";
import type { Request } from "../../functions/api/routes.js";
import { connectTable } from "../../functions/awsClients.js";
import { ensureTable, startDynamo } from "../../infra/local/dynamo.js";
import packageJson from "../../package.json" with { type: "json" };
import { TEST_CREDENTIALS } from "../support/dynalite.js";
import { type RunningStack, startStack } from "../support/localStack.js";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The first answer once the port accepts; a request accepted and never answered fails here, not silently. */
async function firstAnswer(url: string, init: RequestInit = {}): Promise<Response> {
  for (;;) {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
    } catch (error) {
      if ((error as Error).name === "TimeoutError") throw new Error(`${url} was accepted and not answered`);
      await new Promise((resolve) => setTimeout(resolve, 50)); // not listening yet: connection refused
    }
  }
}

describe("GET /health while the local stack starts", () => {
  let stack: RunningStack | undefined;
  let starting: Promise<RunningStack> | undefined;
  let holdDir: string | undefined;
  afterAll(async () => {
    // Whatever happened, let start-up finish and stop what it started.
    if (holdDir) await writeFile(path.join(holdDir, "go"), "").catch(() => undefined);
    stack ??= await starting?.catch(() => undefined);
    await stack?.stop();
    if (holdDir) await rm(holdDir, { recursive: true, force: true });
  });

  it("answers requests accepted during start-up with 503 and Retry-After, changes nothing, then answers 200 with the version", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const apiKey = `sk_test_health_${Math.random().toString(36).slice(2)}`;
    holdDir = await mkdtemp(path.join(tmpdir(), "stepwise-health-"));
    const go = path.join(holdDir, "go");
    // Start-up is held after the port accepts and before the API is ready, until the test says go.
    starting = startStack({ PORT: String(port), STEPWISE_API_KEY: apiKey, LOCAL_START_HOLD_FILE: go });
    starting.catch(() => undefined); // awaited below; a failure is reported there

    const health = await firstAnswer(`${url}/health`);
    expect(health.status).toBe(503);
    expect(health.headers.get("retry-after")).toBe("1");
    expect(await health.json()).toEqual({ status: "unavailable", version: packageJson.version, checks: { stack: "starting" } });

    const auth = { authorization: `Bearer ${apiKey}` };
    const submit = await fetch(`${url}/v1/runs`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ input: "Compute 2+2" }),
    });
    expect(submit.status).toBe(503);
    expect(submit.headers.get("retry-after")).toBe("1");
    expect(((await submit.json()) as any).error.code).toBe("starting");

    await writeFile(go, "");
    stack = await starting;

    const ready = await fetch(`${url}/health`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ok", version: packageJson.version, checks: { table: "ok", stateMachine: "ok" } });
    // The submit refused during start-up created no run.
    const runs = await fetch(`${url}/v1/runs`, { headers: auth });
    expect(runs.status).toBe(200);
    expect(((await runs.json()) as any).runs).toEqual([]);
  }, 240_000);
});

describe("GET /health's checks", () => {
  it("answers 503 naming each dependency that does not answer, and 200 once all do", async () => {
    const dynamo = await startDynamo({ credentials: TEST_CREDENTIALS });
    const clientConfig = { endpoint: dynamo.endpoint, region: "us-east-1", credentials: TEST_CREDENTIALS, maxAttempts: 1 };
    const table = connectTable("stepwise", clientConfig);
    const admin = new DynamoDBClient(clientConfig);
    const check = async (settings: { stateMachineArn?: string }) => {
      const result = await health({ services: { table, settings } } as unknown as Request);
      return { status: result.statusCode, retryAfter: result.headers?.["retry-after"], body: JSON.parse(String(result.body)) };
    };
    try {
      // The table does not exist yet, and there is no state machine to start runs on.
      expect(await check({})).toEqual({
        status: 503,
        retryAfter: "1",
        body: {
          status: "unavailable",
          version: packageJson.version,
          checks: { table: "ResourceNotFoundException", stateMachine: "not configured" },
        },
      });
      await ensureTable(admin, "stepwise");
      expect((await check({})).body.checks).toEqual({ table: "ok", stateMachine: "not configured" });
      expect(await check({ stateMachineArn: "arn:aws:states:us-east-1:000000000000:stateMachine:Stepwise" })).toEqual({
        status: 200,
        retryAfter: undefined,
        body: { status: "ok", version: packageJson.version, checks: { table: "ok", stateMachine: "ok" } },
      });
      // The database goes away: not ready again.
      await dynamo.close();
      const gone = await check({ stateMachineArn: "arn:aws:states:us-east-1:000000000000:stateMachine:Stepwise" });
      expect(gone.status).toBe(503);
      expect(gone.body.checks.table).not.toBe("ok");
    } finally {
      admin.destroy();
      (await table.client()).destroy();
      await dynamo.close();
    }
  }, 60_000);
});
