import { describe, expect, it } from "vitest";
import { z } from "zod";
import { decideInterrupt } from "../../../../shared/agent/interrupts.js";
import { runAgentLoop } from "../../../../shared/agent/loop.js";
import type { ResolveInterruptRequest } from "../../../../shared/contracts/interrupts.js";
import type { ChatRequest } from "../../../../shared/llm/types.js";
import { FixableToolError, type Tool } from "../../../../shared/ports/tools.js";
import { ScriptedModel } from "../../../../shared/testing/scriptedModel.js";
import { ToolRegistry } from "../../../../shared/tools/registry.js";
import { defineTool } from "../../../../shared/tools/tool.js";
import { withRun } from "../../../support/memoryRun.js";

/**
 * Pause on a failing tool (shared/agent/toolFailure.ts) over in-memory ports: a call that fails for
 * a reason a person can fix pauses its agent with a tool_failure interrupt; the decision (retry,
 * edit, skip, fail) applies to that call alone, no model call is made again, and a write call
 * whose outcome is unknown asks a person unless its tool is idempotent.
 */

/** The model: call `tool` with `args` (and `read` beside it), then answer with what the tools returned. */
function caller(tool: string, args: unknown, withRead = false) {
  return new ScriptedModel((request: ChatRequest) => {
    const results = request.messages.filter((m) => m.role === "tool");
    if (results.length) return { text: `Done: ${results.map((m) => m.content).join(" | ")}` };
    return {
      calls: [{ id: "call_1", name: tool, args }, ...(withRead ? [{ id: "call_2", name: "lookup", args: { key: "a" } }] : [])],
    };
  });
}

/** A service behind a key: refuses (401) while `expired`, counts what it was asked and what it did. */
function keyedService() {
  const service = { expired: true, asked: 0, effects: [] as string[] };
  const send = defineTool({
    name: "send_invoice",
    description: "Sends an invoice.",
    access: "write",
    parameters: z.object({ to: z.string() }),
    async run({ to }) {
      service.asked++;
      if (service.expired)
        throw new FixableToolError("the billing API answered 401: the key has expired", { reason: "unauthorized", status: 401 });
      service.effects.push(to);
      return `invoice sent to ${to}`;
    },
  });
  const lookup = defineTool({
    name: "lookup",
    description: "Looks a value up.",
    access: "read",
    parameters: z.object({ key: z.string() }),
    async run({ key }) {
      service.asked++;
      return `value of ${key}`;
    },
  });
  return { service, tools: [send, lookup] as Tool[] };
}

async function loopOn(model: ScriptedModel, tools: Tool[], toolFailures?: "pause" | "report") {
  const fixture = await withRun({ status: "running", mode: "react" }, { model });
  const { ports, runId } = fixture;
  const go = async () => {
    const { journal, events, ...outcome } = await runAgentLoop(
      { runId, ports },
      {
        scope: "react",
        role: "react",
        system: () => "You are Stepwise.",
        conversation: [{ role: "user", content: "Bill ACME." }],
        tools: new ToolRegistry(tools),
        maxRounds: 5,
        toolFailures,
      },
    );
    await Promise.all([journal.flush(), events]);
    return outcome;
  };
  const decide = async (interruptId: string, request: ResolveInterruptRequest) =>
    decideInterrupt(ports, (await ports.runs.get(runId))!, interruptId, request, (name) => tools.find((t) => t.name === name));
  return { ...fixture, go, decide };
}

describe("a tool that fails for a reason a person can fix", () => {
  it("pauses with a tool_failure interrupt; after retry only that call runs again and the model is called as often as without the failure", async () => {
    // Without the failure: the reference run.
    const clean = keyedService();
    clean.service.expired = false;
    const reference = await loopOn(caller("send_invoice", { to: "acme" }, true), clean.tools);
    expect(await reference.go()).toMatchObject({ kind: "answer" });

    const { service, tools } = keyedService();
    const model = caller("send_invoice", { to: "acme" }, true);
    const { go, decide, ports, fakes, runId } = await loopOn(model, tools);
    const paused = await go();
    expect(paused).toMatchObject({ kind: "interrupted" });
    const interruptId = (paused as { interruptId: string }).interruptId;
    const interrupt = await ports.interrupts.get(runId, interruptId);
    expect(interrupt).toMatchObject({
      kind: "tool_failure",
      status: "pending",
      toolName: "send_invoice",
      callId: "call_1",
      arguments: { to: "acme" },
      failure: { attempt: 1, reason: "unauthorized", status: 401, error: expect.stringContaining("401") },
    });
    expect(await ports.runs.status(runId)).toBe("awaiting_input");
    const opened = fakes.events.all(runId).find((e) => e.type === "interrupt.opened");
    expect(opened?.data).toMatchObject({ kind: "tool_failure", failure: { reason: "unauthorized", status: 401 } });
    // The model never read the error.
    expect(fakes.events.all(runId).filter((e) => e.type === "tool.result" && e.data.tool === "send_invoice")).toEqual([]);

    // Another turn before the decision waits on the same interrupt and runs nothing.
    expect(await go()).toMatchObject({ kind: "interrupted", interruptId });
    expect(service.asked).toBe(2); // send_invoice once, lookup once

    service.expired = false; // the person renews the key
    await decide(interruptId, { decision: "retry" });
    const answered = await go();
    expect(answered).toMatchObject({ kind: "answer", text: "Done: invoice sent to acme | value of a" });
    expect(service.asked).toBe(3); // send_invoice again; lookup replayed from the journal
    expect(service.effects).toEqual(["acme"]);
    // As many model calls as without the failure, and the same messages in the last one.
    expect(model.requests).toHaveLength(reference.model.requests.length);
    expect(model.requests.at(-1)?.messages).toEqual(reference.model.requests.at(-1)?.messages);
    // The journal keeps both attempts: the failed one, and the result.
    const records = await ports.journal.read(runId, "react");
    expect(records.filter((r) => r.kind === "attempt")).toEqual([
      expect.objectContaining({ callId: "call_1#1", value: expect.objectContaining({ reason: "unauthorized", attempt: 1 }) }),
    ]);
    expect(records.filter((r) => r.kind === "tool").map((r) => r.callId)).toEqual(expect.arrayContaining(["call_1", "call_2"]));
    expect(records.filter((r) => r.kind === "intent").map((r) => r.callId)).toEqual(expect.arrayContaining(["call_1", "call_1#2"]));
    // Done, the run does it no more.
    expect(await go()).toMatchObject({ kind: "answer" });
    expect(service.effects).toEqual(["acme"]);
  });

  it("a retry that fails again pauses once more, on its own attempt", async () => {
    const { service, tools } = keyedService();
    const { go, decide, ports, runId } = await loopOn(caller("send_invoice", { to: "acme" }), tools);
    const first = (await go()) as { interruptId: string };
    await decide(first.interruptId, { decision: "retry" });
    const second = (await go()) as { kind: string; interruptId: string };
    expect(second.kind).toBe("interrupted");
    expect(second.interruptId).not.toBe(first.interruptId);
    expect(await ports.interrupts.get(runId, second.interruptId)).toMatchObject({ failure: { attempt: 2, reason: "unauthorized" } });
    expect(service.asked).toBe(2);
  });

  it("edit runs the call with the person's arguments (checked against the tool's schema)", async () => {
    const { service, tools } = keyedService();
    const { go, decide } = await loopOn(caller("send_invoice", { to: "acme" }), tools);
    const paused = (await go()) as { interruptId: string };
    await expect(decide(paused.interruptId, { decision: "edit", arguments: { to: 7 } })).rejects.toMatchObject({ statusCode: 400 });
    service.expired = false;
    await decide(paused.interruptId, { decision: "edit", arguments: { to: "acme-eu" } });
    expect(await go()).toMatchObject({ kind: "answer", text: expect.stringContaining("invoice sent to acme-eu") });
    expect(service.effects).toEqual(["acme-eu"]);
  });

  it("skip puts the person's message in the call's place; the call does not run again", async () => {
    const { service, tools } = keyedService();
    const { go, decide } = await loopOn(caller("send_invoice", { to: "acme" }), tools);
    const paused = (await go()) as { interruptId: string };
    await decide(paused.interruptId, { decision: "skip", message: "billing is down today; leave it" });
    expect(await go()).toMatchObject({
      kind: "answer",
      text: expect.stringContaining("Skipped by the user: billing is down today; leave it"),
    });
    expect(service.asked).toBe(1);
    expect(service.effects).toEqual([]);
  });

  it("fail ends the agent with the person's reason; the call does not run again", async () => {
    const { service, tools } = keyedService();
    const { go, decide } = await loopOn(caller("send_invoice", { to: "acme" }), tools);
    const paused = (await go()) as { interruptId: string };
    await decide(paused.interruptId, { decision: "fail", message: "wrong customer" });
    await expect(go()).rejects.toMatchObject({ code: "tool_failed", message: expect.stringContaining("wrong customer") });
    expect(service.asked).toBe(1);
  });

  it("a tool_failure takes retry, edit, skip or fail, nothing else (409, nothing changes)", async () => {
    const { tools } = keyedService();
    const { go, decide, ports, runId } = await loopOn(caller("send_invoice", { to: "acme" }), tools);
    const paused = (await go()) as { interruptId: string };
    await expect(decide(paused.interruptId, { decision: "approve" })).rejects.toMatchObject({ statusCode: 409 });
    expect((await ports.interrupts.get(runId, paused.interruptId))?.status).toBe("pending");
  });

  it("with the tenant's toolFailures 'report', the same failure is the model's to read: no pause, no interrupt", async () => {
    const { service, tools } = keyedService();
    const model = caller("send_invoice", { to: "ACME" });
    const { go, ports, runId } = await loopOn(model, tools, "report");
    expect(await go()).toMatchObject({ kind: "answer", text: expect.stringContaining("the key has expired") });
    expect(await ports.interrupts.list(runId)).toEqual([]);
    expect(service.asked).toBe(1);
    expect(model.requests).toHaveLength(2);
  });

  it("a failure no person can fix (a plain error) is still the model's to read", async () => {
    const broken = defineTool({
      name: "broken",
      description: "Breaks.",
      access: "read",
      parameters: z.object({}),
      async run() {
        throw new Error("division by zero");
      },
    });
    const { go } = await loopOn(caller("broken", {}), [broken]);
    expect(await go()).toMatchObject({ kind: "answer", text: expect.stringContaining("division by zero") });
  });
});

describe("a write call whose outcome is unknown (the step stopped mid-call)", () => {
  /** A write tool whose first call never returns (the process died there); `idempotent` as given. */
  function dyingWrite(idempotent: boolean) {
    const effects: string[] = [];
    let calls = 0;
    const tool = defineTool({
      name: "pay",
      description: "Pays.",
      access: "write",
      idempotent,
      parameters: z.object({ amount: z.number() }),
      run: ({ amount }) => {
        if (calls++ === 0) return new Promise<string>(() => undefined); // the step dies mid-call
        effects.push(`paid ${amount}`);
        return Promise.resolve(`paid ${amount}`);
      },
    });
    return { tool, effects, calls: () => calls };
  }

  it("is in doubt: a person decides before it runs again", async () => {
    const pay = dyingWrite(false);
    const model = caller("pay", { amount: 100 });
    const { go, decide, ports, runId } = await loopOn(model, [pay.tool]);
    void go(); // the step that dies mid-call: it never ends
    await expect.poll(() => pay.calls()).toBe(1);
    const resumed = (await go()) as { kind: string; interruptId: string };
    expect(resumed.kind).toBe("interrupted");
    expect(pay.calls()).toBe(1);
    expect(await ports.interrupts.get(runId, resumed.interruptId)).toMatchObject({
      kind: "tool_failure",
      failure: { attempt: 1, reason: "in_doubt" },
      summary: expect.stringContaining("may or may not have run"),
    });
    await decide(resumed.interruptId, { decision: "skip", message: "it went through; I checked the bank" });
    expect(await go()).toMatchObject({ kind: "answer", text: expect.stringContaining("it went through") });
    expect(pay.calls()).toBe(1);
    expect(model.requests).toHaveLength(2);
  });

  it("runs again without asking when the tool declares itself idempotent", async () => {
    const pay = dyingWrite(true);
    const { go, ports, runId } = await loopOn(caller("pay", { amount: 100 }), [pay.tool]);
    void go();
    await expect.poll(() => pay.calls()).toBe(1);
    expect(await go()).toMatchObject({ kind: "answer", text: "Done: paid 100" });
    expect(await ports.interrupts.list(runId)).toEqual([]);
  });
});
