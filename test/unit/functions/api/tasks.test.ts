import { beforeAll, describe, expect, it } from "vitest";
import type { Request } from "../../../../functions/api/routes.js";
import { taskRoutes } from "../../../../functions/api/tasks.js";
import type { HttpEvent, HttpResult } from "../../../../functions/http.js";
import { StepwiseError } from "../../../../shared/errors.js";
import { fitText } from "../../../../shared/memory/largeText.js";
import { memoryPorts } from "../../../../shared/testing/memoryPorts.js";
import { runRecord } from "../../../support/records.js";

/** `GET /v1/runs/{id}/tasks` and `GET /v1/runs/{id}/tasks/{taskId}/result` over the in-memory ports. */
const { ports } = memoryPorts();
const WHOLE = "长".repeat(60_000); // 180,000 bytes: more than a task record keeps inline

async function get(path: string, tenantId = "tenant_1", accept?: string): Promise<HttpResult> {
  const rawPath = path.split("?")[0]!;
  const route = taskRoutes.find((r) => r.pattern.test(rawPath))!;
  const query = Object.fromEntries(new URLSearchParams(path.split("?")[1] ?? ""));
  const event = {
    rawPath,
    headers: accept ? { accept } : {},
    queryStringParameters: query,
    requestContext: { domainName: "api.test", http: { method: "GET" } },
  } as unknown as HttpEvent;
  const params = route.pattern.exec(rawPath)!.groups as Record<string, string>;
  try {
    return await route.handle({ event, services: ports, tenantId, params, remainingMs: () => 30_000 } as unknown as Request);
  } catch (error) {
    if (error instanceof StepwiseError) return { statusCode: error.statusCode, body: error.message };
    throw error;
  }
}

beforeAll(async () => {
  await ports.runs.create(runRecord("run_a", { status: "running", requestedMode: "plan_solve" }));
  const task = { iteration: 0, stepIndex: 0, title: "汇总", text: "汇总" };
  await ports.tasks.put("run_a", { ...task, taskId: "s1.t1", status: "succeeded", result: "销售额增长了百分之十二。" });
  const kept = await fitText(ports.files, "run_a", "result-0-s1.t2.md", WHOLE);
  await ports.tasks.put("run_a", { ...task, taskId: "s1.t2", status: "succeeded", result: kept });
  await ports.tasks.put("run_a", { ...task, taskId: "s1.t3", status: "pending" });
});

describe("a task's whole result", () => {
  it("held on its record: the text itself, as Markdown", async () => {
    const res = await get("/v1/runs/run_a/tasks/s1.t1/result");
    expect(res).toMatchObject({ statusCode: 200, body: "销售额增长了百分之十二。" });
    expect(res.headers?.["content-type"]).toBe("text/markdown; charset=utf-8");
    const asJson = await get("/v1/runs/run_a/tasks/s1.t1/result", "tenant_1", "application/json");
    expect(JSON.parse(String(asJson.body))).toEqual({ taskId: "s1.t1", bytes: 36, text: "销售额增长了百分之十二。" });
  });

  it("kept in a run file: a redirect to the file's link, so storage sends it whatever its size", async () => {
    const res = await get("/v1/runs/run_a/tasks/s1.t2/result");
    expect(res.statusCode).toBe(302);
    expect(res.headers?.location).toBe("memory://run_a/result-0-s1.t2.md");
    const asJson = await get("/v1/runs/run_a/tasks/s1.t2/result", "tenant_1", "application/json");
    expect(JSON.parse(String(asJson.body))).toEqual({ taskId: "s1.t2", bytes: 180_000, url: "memory://run_a/result-0-s1.t2.md" });
    expect(Buffer.from((await ports.files.get("run_a", "result-0-s1.t2.md"))!.body).toString()).toBe(WHOLE);
  });

  it("of a task the run does not have, or of another tenant's run: 404, as for a run that does not exist", async () => {
    expect(await get("/v1/runs/run_a/tasks/s9.t9/result")).toMatchObject({ statusCode: 404, body: "Run run_a has no task s9.t9." });
    expect(await get("/v1/runs/run_a/tasks/%E0%A4%A/result")).toMatchObject({ statusCode: 404 });
    expect(await get("/v1/runs/run_a/tasks/s1.t1/result", "tenant_2")).toMatchObject({ statusCode: 404, body: "No run with id run_a." });
    expect(await get("/v1/runs/run_zz/tasks/s1.t1/result")).toMatchObject({ statusCode: 404, body: "No run with id run_zz." });
  });

  it("of a task still running: 409, it has none yet", async () => {
    expect(await get("/v1/runs/run_a/tasks/s1.t3/result")).toMatchObject({ statusCode: 409 });
  });
});

describe("a page of a run's tasks", () => {
  it("previews each result, links the whole, and goes on from its cursor", async () => {
    const first = JSON.parse(String((await get("/v1/runs/run_a/tasks?limit=2")).body));
    expect(first.taskCount).toBe(3);
    expect(first.tasks.map((t: { taskId: string }) => t.taskId)).toEqual(["s1.t1", "s1.t2"]);
    expect(first.tasks[1]).toMatchObject({
      resultBytes: 180_000,
      resultCut: true,
      links: { result: "https://api.test/v1/runs/run_a/tasks/s1.t2/result" },
    });
    const next = JSON.parse(String((await get(`/v1/runs/run_a/tasks?cursor=${first.nextCursor}`)).body));
    expect(next.tasks.map((t: { taskId: string }) => t.taskId)).toEqual(["s1.t3"]);
    expect(next.nextCursor).toBeNull();
  });

  it("refuses a bad cursor or limit with 400, and another tenant's run with 404", async () => {
    expect(await get("/v1/runs/run_a/tasks?cursor=bogus")).toMatchObject({ statusCode: 400 });
    expect(await get("/v1/runs/run_a/tasks?limit=0")).toMatchObject({ statusCode: 400 });
    expect(await get("/v1/runs/run_a/tasks?limit=501")).toMatchObject({ statusCode: 400 });
    expect(await get("/v1/runs/run_a/tasks", "tenant_2")).toMatchObject({ statusCode: 404 });
  });
});
