import { beforeAll, describe, expect, it } from "vitest";
import { routes } from "../../../../functions/api/routes.js";
import { openInterrupt } from "../../../../shared/agent/interrupts.js";
import type { Interrupt } from "../../../../shared/contracts/interrupts.js";
import { awaitInterrupt } from "../../../../shared/steps/awaitInterrupt.js";
import { memoryPorts } from "../../../../shared/testing/memoryPorts.js";
import { callRoute } from "../../../support/callRoute.js";
import { runRecord } from "../../../support/records.js";

/**
 * `POST /v1/runs/{id}/interrupts/{interruptId}` over the in-memory ports: every wrong decision is
 * refused with its 4xx and changes nothing (the interrupt stays pending, no event, no record, the
 * waiting execution not resumed). The end-to-end file (test/integration/approvals.test.ts) keeps one
 * refusal of each status through the whole stack, with the table's items compared.
 */
const { ports, fakes } = memoryPorts();
const PLAN_RUN = "run_decideplan01";
const ASK_RUN = "run_decideask001";
let plan: Interrupt;
let ask: Interrupt;

async function waitingRun(runId: string, kind: Interrupt["kind"]): Promise<Interrupt> {
  await ports.runs.create(runRecord(runId, { status: "running", executionArn: ports.executions.arnFor(runId) }));
  await fakes.executions.start(runId);
  const interrupt = await openInterrupt(ports, {
    interruptId: `int_${kind}`,
    runId,
    kind,
    summary: kind === "ask_user" ? "The agent asks: Which city?" : "Approve the plan",
    question: kind === "ask_user" ? "Which city?" : undefined,
    toolName: kind === "ask_user" ? "ask_user" : undefined,
    arguments: kind === "plan_approval" ? { plan: { steps: [] } } : undefined,
  });
  // The "Wait for …" state stores its task token: a decision would complete it.
  await awaitInterrupt({ runId, interruptId: interrupt.interruptId, taskToken: fakes.executions.issueToken(`AQtoken_${kind}`) }, ports);
  return interrupt;
}

beforeAll(async () => {
  plan = await waitingRun(PLAN_RUN, "plan_approval");
  ask = await waitingRun(ASK_RUN, "ask_user");
});

/** The route's answer: its status and error body as the API's error mapping sends them. */
async function decide(runId: string, interruptId: string, body: unknown, tenantId = "tenant_1") {
  const res = await callRoute(routes, ports, { method: "POST", path: `/v1/runs/${runId}/interrupts/${interruptId}`, body, tenantId });
  return { status: res.status, error: res.body?.error as { code: string; message: string; details?: unknown } | undefined };
}

/** Everything a decision could change, for both runs. */
async function state() {
  return JSON.stringify(
    await Promise.all(
      [PLAN_RUN, ASK_RUN].map(async (runId) => ({
        run: await ports.runs.get(runId),
        events: fakes.events.all(runId),
        interrupts: await ports.interrupts.list(runId),
        tokens: [...fakes.executions.tokens.entries()],
      })),
    ),
  );
}

describe("a wrong decision", () => {
  it.each<[string, number, string | undefined, () => [string, string, unknown, string?]]>([
    ["an unknown interrupt id", 404, "not_found", () => [PLAN_RUN, "int_000000000000000000000000", { decision: "approve" }]],
    ["another run's interrupt", 404, "not_found", () => [PLAN_RUN, ask.interruptId, { decision: "answer", message: "x" }]],
    ["an edit on a plan approval", 409, "conflict", () => [PLAN_RUN, plan.interruptId, { decision: "edit", arguments: { plan: {} } }]],
    ["an answer on a plan approval", 409, "conflict", () => [PLAN_RUN, plan.interruptId, { decision: "answer", message: "yes" }]],
    ["an approve on ask_user", 409, "conflict", () => [ASK_RUN, ask.interruptId, { decision: "approve" }]],
    ["a reject on ask_user", 409, "conflict", () => [ASK_RUN, ask.interruptId, { decision: "reject", message: "no" }]],
    ["an answer without a message", 400, undefined, () => [ASK_RUN, ask.interruptId, { decision: "answer" }]],
    ["an answer with a blank message", 400, undefined, () => [ASK_RUN, ask.interruptId, { decision: "answer", message: "   " }]],
    [
      "an answer with arguments",
      400,
      undefined,
      () => [ASK_RUN, ask.interruptId, { decision: "answer", message: "x", arguments: { a: 1 } }],
    ],
    ["arguments with approve", 400, undefined, () => [PLAN_RUN, plan.interruptId, { decision: "approve", arguments: { steps: [] } }]],
    ["an unknown field", 400, "validation_failed", () => [PLAN_RUN, plan.interruptId, { decision: "approve", comment: "lgtm" }]],
    ["an unknown decision", 400, "validation_failed", () => [PLAN_RUN, plan.interruptId, { decision: "maybe" }]],
    ["no decision", 400, "validation_failed", () => [PLAN_RUN, plan.interruptId, {}]],
    ["a message that is not a string", 400, "validation_failed", () => [PLAN_RUN, plan.interruptId, { decision: "approve", message: 5 }]],
    ["a body that is not JSON", 400, "invalid_json", () => [PLAN_RUN, plan.interruptId, "{decision: approve"]],
    ["another tenant's run", 404, "not_found", () => [PLAN_RUN, plan.interruptId, { decision: "approve" }, "tenant_2"]],
    ["another tenant's ask_user", 404, "not_found", () => [ASK_RUN, ask.interruptId, { decision: "answer", message: "hi" }, "tenant_2"]],
  ])("%s → %d, and nothing changes", async (_name, status, code, args) => {
    const before = await state();
    const [runId, interruptId, body, tenantId] = args();
    const res = await decide(runId, interruptId, body, tenantId);
    expect(res.status, JSON.stringify(res.error)).toBe(status);
    expect(res.error).toMatchObject({ code: code ?? expect.any(String), message: expect.any(String) });
    expect(await state()).toBe(before);
    for (const [runId, interrupt] of [
      [PLAN_RUN, plan],
      [ASK_RUN, ask],
    ] as const) {
      expect((await ports.interrupts.get(runId, interrupt.interruptId))?.status).toBe("pending");
      expect(await ports.runs.status(runId)).toBe("awaiting_input");
    }
  });

  it("another tenant's run is reported exactly like a missing one; a wrong kind says what the kind takes", async () => {
    const foreign = await decide(PLAN_RUN, plan.interruptId, { decision: "approve" }, "tenant_2");
    const missing = await decide("run_doesnotexist", plan.interruptId, { decision: "approve" });
    expect(foreign.error!.message.replace(PLAN_RUN, "<id>")).toBe(missing.error!.message.replace("run_doesnotexist", "<id>"));
    const wrongKind = await decide(PLAN_RUN, plan.interruptId, { decision: "answer", message: "yes" });
    expect(wrongKind.error).toMatchObject({
      message: "A plan_approval interrupt takes approve or reject, not answer.",
      details: { allowed: ["approve", "reject"] },
    });
    expect((await decide(ASK_RUN, ask.interruptId, { decision: "approve" })).error!.message).toBe(
      "An ask_user interrupt takes answer, not approve.",
    );
  });
});
