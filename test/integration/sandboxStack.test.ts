import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { KMSClient, ListKeysCommand } from "@aws-sdk/client-kms";
import { InvokeCommand, LambdaClient } from "@aws-sdk/client-lambda";
import { ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { ListStateMachinesCommand, SFNClient } from "@aws-sdk/client-sfn";
import { GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventPage } from "../../shared/apiClient/client.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";

/**
 * The sandbox inside the whole local stack: what a tenant's code meets there. The stack's own
 * endpoints serve nobody without its credentials (a socket is all a process that reaches
 * JavaScript could open), Python-level escapes are refused with the run going on, and afterwards
 * the stack's process tree holds no sandbox process but the spare one, its data folder unchanged.
 */
let stack: RunningStack;
let main: Client;
let other: Client;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), "stepwise-sandbox-stack-"));
  stack = await startStack({ STEPWISE_DATA_DIR: dataDir, SANDBOX_TIMEOUT_MS: "20000" }, ["other"]);
  main = new Client(stack.url, stack.apiKey);
  other = new Client(stack.url, stack.keys.other!);
});

afterAll(async () => {
  await stack?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** The stack's child processes that are sandbox processes (the interpreter's script on their command line). */
function sandboxProcesses(): number[] {
  const found: number[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const ppid = Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
      const command = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (ppid === stack.pid && command.includes("pythonProcess.mjs")) found.push(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe("the sandbox in the local stack", { timeout: 240_000 }, () => {
  it("every emulated AWS endpoint refuses requests without the stack's credentials", async () => {
    const endpoints = stack.endpoints!;
    const wrong = { accessKeyId: endpoints.credentials.accessKeyId, secretAccessKey: "guessed" };
    const calls: [string, (credentials: typeof wrong) => Promise<unknown>][] = [
      [
        "DynamoDB",
        (c) =>
          new DynamoDBClient({ endpoint: endpoints.dynamodb, region: endpoints.region, credentials: c, maxAttempts: 1 }).send(
            new ListTablesCommand({}),
          ),
      ],
      [
        "Step Functions",
        (c) =>
          new SFNClient({ endpoint: endpoints.sfn, region: endpoints.region, credentials: c, maxAttempts: 1 }).send(
            new ListStateMachinesCommand({}),
          ),
      ],
      [
        "SQS",
        (c) =>
          new SQSClient({ endpoint: endpoints.sqs, region: endpoints.region, credentials: c, maxAttempts: 1 }).send(
            new GetQueueAttributesCommand({ QueueUrl: endpoints.notifyQueueUrl }),
          ),
      ],
      [
        "S3",
        (c) =>
          new S3Client({ endpoint: endpoints.s3, region: endpoints.region, credentials: c, forcePathStyle: true, maxAttempts: 1 }).send(
            new ListObjectsV2Command({ Bucket: endpoints.filesBucket }),
          ),
      ],
      [
        "KMS",
        (c) =>
          new KMSClient({ endpoint: endpoints.kms, region: endpoints.region, credentials: c, maxAttempts: 1 }).send(
            new ListKeysCommand({}),
          ),
      ],
      [
        "Lambda",
        (c) =>
          new LambdaClient({ endpoint: endpoints.lambda, region: endpoints.region, credentials: c, maxAttempts: 1 }).send(
            new InvokeCommand({ FunctionName: "stepwise-sandbox", Payload: Buffer.from('{"code":"1"}') }),
          ),
      ],
    ];
    for (const [service, call] of calls) {
      await expect(call(wrong), `${service} with a guessed secret`).rejects.toMatchObject({
        $metadata: { httpStatusCode: expect.any(Number) },
      });
      const unsigned = await fetch(endpointOf(service), {
        method: "POST",
        headers: { "content-type": "application/x-amz-json-1.0" },
        body: "{}",
      });
      expect(unsigned.status, `${service} unsigned`).toBeGreaterThanOrEqual(400);
      expect(unsigned.status, `${service} unsigned`).toBeLessThan(500);
    }
  });

  it("Python-level escapes are refused, the tool's output says so, and the run goes on", async () => {
    const keyBefore = readFileSync(path.join(dataDir, "local-kms.key"), "utf8");
    const code = [
      "tries = {",
      "  'the JS bridge': 'import js',",
      "  'the core module': 'import _pyodide_core',",
      "  'a built-in made directly': \"import _imp, importlib.machinery; _imp.create_builtin(importlib.machinery.ModuleSpec('_pyodide_core', None))\",",
      "  'the host files': \"open('/etc/passwd').read()\",",
      "  'a socket': \"import socket; socket.create_connection(('127.0.0.1', 80), timeout=2)\",",
      "}",
      "for name, attempt in tries.items():",
      "    try:",
      "        exec(attempt)",
      "        print(name, 'REACHED')",
      "    except BaseException as error:",
      "        print(name, 'refused:', type(error).__name__)",
    ].join("\n");
    const { runId } = await main.submit({ input: `Run this Python:\n\`\`\`python\n${code}\n\`\`\``, mode: "react" });
    const run = await main.waitFor(runId, undefined, 200_000);
    expect(run.status).toBe("succeeded");
    const events = (await main.request<EventPage>("GET", `/v1/runs/${runId}/events?limit=500`)).body.events as any[];
    const output = events.find((e) => e.type === "tool.result" && e.data.tool === "run_code").data.output as string;
    for (const name of ["the JS bridge", "the core module", "a built-in made directly", "the host files", "a socket"])
      expect(output).toMatch(new RegExp(`${name} refused: \\w+`));
    expect(output).not.toContain("REACHED");
    // The call's process is gone; at most the spare interpreter waits. The data folder is as it was.
    expect(sandboxProcesses().length).toBeLessThanOrEqual(1);
    expect(readFileSync(path.join(dataDir, "local-kms.key"), "utf8")).toBe(keyBefore);
    expect(existsSync(path.join(dataDir, "local-credentials.json"))).toBe(true);
  });

  // The runtime a machine without Debian's data libraries (or bubblewrap) runs: the local stack picks
  // Pyodide there (infra/local/stack.ts), as SANDBOX_RUNTIME=pyodide here does on any machine.
  it("without the data libraries: run_code says standard library only, and the model analyses a CSV with it", async () => {
    const sales = "region,month,amount\nnorth,jan,120.5\nsouth,jan,80\nnorth,feb,99.5\nsouth,feb,100\neast,feb,50\n";
    const tools = (await main.request<{ tools: { name: string; description: string }[] }>("GET", "/v1/tools")).body.tools;
    const description = tools.find((t) => t.name === "run_code")!.description;
    expect(description).toContain("standard library only");
    expect(description).toContain("no pandas, numpy or matplotlib");
    const uploaded = await fetch(`${stack.url}/v1/files?name=sales.csv`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "text/csv" },
      body: sales,
    });
    expect(uploaded.status).toBe(201);
    const { fileId } = (await uploaded.json()) as { fileId: string };
    const { runId } = await main.submit({ input: "Analyse the attached CSV", mode: "react", files: [fileId] });
    const run = await main.waitFor(runId, undefined, 200_000);
    expect(run.status).toBe("succeeded");
    const events = (await main.request<EventPage>("GET", `/v1/runs/${runId}/events?limit=500`)).body.events as any[];
    const calls = events.filter((e) => e.type === "tool.called" && e.data.tool === "run_code");
    const results = events.filter((e) => e.type === "tool.result" && e.data.tool === "run_code");
    // The model wrote the standard library's csv and statistics, no import that would fail here; it ran.
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) expect(call.data.arguments.code).not.toMatch(/pandas|numpy|matplotlib/);
    expect(calls[0].data.arguments.code).toMatch(/^import csv\b/m);
    expect(results.map((r) => r.data.ok)).toEqual(calls.map(() => true));
    expect(results[0].data.output).toContain("sales.csv: 5 rows, 3 columns");
    expect(results[0].data.output).not.toContain("ModuleNotFoundError");
  });

  it("a tenant whose bound is one sandbox at once: of two parallel run_code tasks, the second never runs beside the first; another tenant's run beside it is not held up", async () => {
    expect((await main.request("PUT", "/v1/settings", { maxSandboxes: 1 })).status).toBe(200);
    // Over the deployment's limit (4 by default): refused, and nothing changed.
    const tooMany = await main.request<any>("PUT", "/v1/settings", { maxSandboxes: 5 });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toContain("MAX_SANDBOXES_PER_TENANT");
    expect((await main.request<any>("GET", "/v1/settings")).body.maxSandboxes).toBe(1);
    // Each program says when it ran; it sleeps longer than a waiting call waits (10 s).
    const program = (name: string) =>
      `\`\`\`python\nimport time\nstart = time.time()\ntime.sleep(15)\nprint('${name} ran from', start, 'to', time.time())\n\`\`\``;
    const input = `Run these two programs:\n${program("first")}\n${program("second")}`;
    const [mine, theirs] = await Promise.all([main.submit({ input, mode: "plan_solve" }), other.submit({ input, mode: "plan_solve" })]);
    const outputsOf = async (client: Client, runId: string) => {
      await client.waitFor(runId, undefined, 200_000);
      const events = (await client.request<EventPage>("GET", `/v1/runs/${runId}/events?limit=500`)).body.events as any[];

      return events
        .filter((e) => e.type === "tool.result" && e.data.tool === "run_code")
        .map((e) => e.data as { ok: boolean; output: string });
    };
    const spans = (results: { output: string }[]) =>
      results.flatMap(({ output }) => {
        const ran = /ran from ([\d.]+) to ([\d.]+)/.exec(output);
        return ran ? [[Number(ran[1]), Number(ran[2])] as const] : [];
      });
    const [own, others] = await Promise.all([outputsOf(main, mine.runId), outputsOf(other, theirs.runId)]);
    // The bounded tenant: both tasks called run_code; the second was refused with the limit named, or waited until the first had ended.
    expect(own).toHaveLength(2);
    const refused = own.filter((r) => !r.ok);
    for (const r of refused) expect(r.output).toContain("at most 1 code sandbox running at once (its maxSandboxes setting)");
    const ran = spans(own).sort((a, b) => a[0] - b[0]);
    expect(ran.length + refused.length).toBe(2);
    if (ran.length === 2) expect(ran[1]![0]).toBeGreaterThanOrEqual(ran[0]![1]);
    // The other tenant, at the default limit, ran both programs.
    expect(others.map((r) => r.ok)).toEqual([true, true]);
    expect(spans(others)).toHaveLength(2);
  });
});

function endpointOf(service: string): string {
  const endpoints = stack.endpoints!;
  const byService: Record<string, string> = {
    DynamoDB: endpoints.dynamodb,
    "Step Functions": endpoints.sfn,
    SQS: endpoints.sqs,
    S3: `${endpoints.s3}/${endpoints.filesBucket}`,
    KMS: endpoints.kms,
    Lambda: `${endpoints.lambda}/2015-03-31/functions/stepwise-sandbox/invocations`,
  };
  return byService[service]!;
}
