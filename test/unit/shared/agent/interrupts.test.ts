import { describe, expect, it } from "vitest";
import { decideInterrupt, openInterrupt } from "../../../../shared/agent/interrupts.js";
import type { Interrupt } from "../../../../shared/contracts/interrupts.js";
import { awaitInterrupt } from "../../../../shared/steps/awaitInterrupt.js";
import { writeArtifact } from "../../../../shared/tools/artifacts.js";
import { withRun } from "../../../support/memoryRun.js";

/** A person's decision on an interrupt (the API's core) over in-memory ports. */

const findTool = (name: string) => (name === "write_artifact" ? writeArtifact : undefined);

async function waiting(kind: Interrupt["kind"] = "tool_approval") {
  const fixture = await withRun({ status: "running", mode: "react" });
  const { ports, fakes, runId } = fixture;
  const interrupt = await openInterrupt(ports, {
    interruptId: "int_1",
    runId,
    kind,
    toolName: kind === "tool_approval" ? "write_artifact" : undefined,
    arguments: { filename: "a.md", content: "x" },
    question: kind === "ask_user" ? "Which city?" : undefined,
    summary: "Decide",
  });
  // The "Wait for …" state stores its task token.
  const taskToken = fakes.executions.issueToken("AQtoken_1");
  await awaitInterrupt({ runId, interruptId: interrupt.interruptId, taskToken }, ports);
  const decide = async (request: Parameters<typeof decideInterrupt>[3]) =>
    decideInterrupt(ports, (await ports.runs.get(runId))!, "int_1", request, findTool);
  return { ...fixture, decide, taskToken };
}

describe("decideInterrupt", () => {
  it.each([
    ["approve", { decision: "approve" as const }],
    ["reject with a reason", { decision: "reject" as const, message: "not that file" }],
    ["edit with arguments that fit the tool", { decision: "edit" as const, arguments: { filename: "b.md", content: "y" } }],
  ])("%s: recorded once, announced, the run running again, and the waiting execution resumed", async (_name, request) => {
    const { ports, fakes, runId, decide, taskToken } = await waiting();
    expect(await ports.runs.status(runId)).toBe("awaiting_input");
    const decided = await decide(request);
    expect(decided).toMatchObject({ status: "resolved", resolution: { decision: request.decision } });
    expect(await ports.interrupts.get(runId, "int_1")).toMatchObject({ status: "resolved", resolution: request });
    expect(
      fakes.events
        .all(runId)
        .filter((e) => e.type === "interrupt.resolved")
        .map((e) => e.data),
    ).toEqual([expect.objectContaining({ interruptId: "int_1", decision: request.decision })]);
    expect(await ports.runs.status(runId)).toBe("running");
    expect(fakes.executions.tokens.get(taskToken)?.output).toEqual({ interruptId: "int_1" });
  });

  it("an answer to the agent's question resumes it; an answer without words is refused", async () => {
    const { ports, runId, decide } = await waiting("ask_user");
    await expect(decide({ decision: "answer", message: "  " })).rejects.toMatchObject({ statusCode: 400 });
    expect((await ports.interrupts.get(runId, "int_1"))?.status).toBe("pending");
    expect(await decide({ decision: "answer", message: "Paris" })).toMatchObject({ resolution: { decision: "answer", message: "Paris" } });
  });

  it.each([
    ["a decision the kind does not take", { decision: "answer" as const, message: "x" }, 409],
    ["an edit without arguments", { decision: "edit" as const }, 400],
    ["an edit whose arguments do not fit the tool", { decision: "edit" as const, arguments: { filename: "../etc/passwd" } }, 400],
    ["arguments with another decision", { decision: "approve" as const, arguments: { filename: "b.md" } }, 400],
  ])("%s → %d, and nothing changes", async (_name, request, status) => {
    const { ports, fakes, runId, decide, taskToken } = await waiting();
    const events = fakes.events.all(runId).length;
    await expect(decide(request)).rejects.toMatchObject({ statusCode: status });
    expect((await ports.interrupts.get(runId, "int_1"))?.status).toBe("pending");
    expect(fakes.events.all(runId)).toHaveLength(events);
    expect(fakes.executions.tokens.get(taskToken)?.output).toBeUndefined();
  });

  it("the same decision again is a no-op; a different one after it is a 409", async () => {
    const { fakes, runId, decide } = await waiting();
    await decide({ decision: "reject", message: "no" });
    expect(await decide({ decision: "reject", message: "no" })).toMatchObject({ status: "resolved" });
    await expect(decide({ decision: "approve" })).rejects.toMatchObject({ statusCode: 409 });
    expect(fakes.events.all(runId).filter((e) => e.type === "interrupt.resolved")).toHaveLength(1);
  });

  it("on a run that has ended, a pending interrupt can no longer be decided (409)", async () => {
    const { ports, runId, decide } = await waiting();
    await ports.runs.update(runId, { status: "cancelled" });
    await expect(decide({ decision: "approve" })).rejects.toMatchObject({ statusCode: 409 });
  });

  it("a dead token whose execution has gone: the execution is started again and the decision stands (not 202-and-nothing)", async () => {
    const { fakes, runId, decide, taskToken } = await waiting();
    fakes.executions.tokens.delete(taskToken);
    fakes.executions.setStatus(runId, "missing");
    await decide({ decision: "approve" });
    expect(await fakes.executions.describe(fakes.executions.arnFor(runId))).toBe("RUNNING");
    expect(fakes.executions.calls.filter((c) => c.action === "start").map((c) => c.target)).toEqual([runId, runId]);
  });

  it("a dead token whose execution ended for good: the run ends, and the decision is a 409", async () => {
    const { ports, fakes, runId, decide, taskToken } = await waiting();
    fakes.executions.tokens.delete(taskToken);
    fakes.executions.setStatus(runId, "SUCCEEDED");
    await expect(decide({ decision: "approve" })).rejects.toMatchObject({ statusCode: 409 });
    expect(await ports.runs.status(runId)).toBe("succeeded");
    expect(await fakes.activeRuns.count("tenant_1")).toBe(0);
  });
});
