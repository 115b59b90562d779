import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { respond } from "../../infra/offlineModel/brain.js";
import type { BrainRequest } from "../../infra/offlineModel/types.js";
import type { RunEvent } from "../../shared/contracts/events.js";
import type { SessionView } from "../../shared/contracts/responses.js";
import { Client } from "../support/client.js";

import { type RunningStack, startStack } from "../support/localStack.js";
import { type ScriptedModel, type ScriptStep, startScriptedModel } from "../support/scriptedModel.js";
import { answer, callTools, last, marker, ScriptRouter, type Turn, textOf } from "../support/scriptedRoles.js";

/** The arguments of a plan approval: the plan the person is asked about. */
type PlanArguments = { plan: { steps: { title: string }[] } };

/**
 * Mode auto without deepThink: the router model chooses answer, react or plan_solve with its
 * choose_mode tool. A scripted model plays the router; requests without a scenario marker are
 * answered by the offline model's own brain (the deterministic model `npm start` uses), so the
 * offline model's routing runs through the same stack.
 */

const offline = (turn: Turn): ScriptStep => {
  const reply = respond({ messages: turn.request.messages, tools: turn.request.tools } as unknown as BrainRequest);
  return {
    ...(reply.content !== null ? { text: reply.content } : {}),
    toolCalls: reply.toolCalls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })),
  };
};

const router = new ScriptRouter(offline);
let scripted: ScriptedModel;
let stack: RunningStack;
let client: Client;

beforeAll(async () => {
  scripted = await startScriptedModel(router.script);
  stack = await startStack({ OPENAI_BASE_URL: scripted.url, OPENAI_API_KEY: "test", STEPWISE_MODEL: "scripted" });
  client = new Client(stack.url, stack.apiKey);
});

afterAll(async () => {
  await stack?.stop();
  await scripted?.close();
});

type Events = RunEvent[];
const ofType = <T extends RunEvent["type"]>(events: Events, type: T) =>
  events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);

async function runToEnd(body: Record<string, unknown>): Promise<{ runId: string; run: any; events: Events }> {
  const { runId } = await client.submit(body);
  const { run, events } = await client.waitForEnd(runId, 90_000);
  return { runId, run, events };
}

const choose = (args: Record<string, unknown>) => callTools([{ name: "choose_mode", arguments: args }]);

describe("the router chooses answer", () => {
  const INPUT = `${marker("r-answer")} Who are you?`;
  const ANSWER = "I am Stepwise, a team of agents.";
  router.on("r-answer", (turn) =>
    turn.role === "router"
      ? choose({ mode: "answer", answer: ANSWER, reason: "a question about me" })
      : { status: 400, message: `a ${turn.role} was asked` },
  );
  let result: Awaited<ReturnType<typeof runToEnd>>;
  beforeAll(async () => {
    result = await runToEnd({ input: INPUT }); // mode auto is the default
  });

  it("asks the router with the choose_mode tool only, the request as the user's message", () => {
    const [request] = router.of("r-answer");
    expect(request!.role).toBe("router");
    expect(request!.request.tools!.map((t) => (t.type === "function" ? t.function.name : t.custom.name))).toEqual(["choose_mode"]);
    const [tool] = request!.request.tools!;
    expect(tool!.type === "function" && (tool.function.parameters as any).properties.mode.enum).toEqual(["answer", "react", "plan_solve"]);
    expect(request!.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(last(request!).content).toBe(INPUT);
  });

  it("ends the run with that answer, and no planner, agent or summarizer is asked", () => {
    const { run, events } = result;
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.mode).toBe("answer");
    expect(run.requestedMode).toBe("auto");
    expect(run.result).toBe(ANSWER);
    expect(run.plan).toBeNull();
    expect(run.tasks).toEqual([]);
    expect(run.usage.llmCalls).toBe(1);
    expect(router.of("r-answer")).toHaveLength(1);
    // An answer given as choose_mode's argument reaches clients as one delta, before the run ends.
    expect(events.map((e) => e.type)).toEqual(["run.started", "agent.delta", "agent.thought", "run.succeeded"]);
    expect(ofType(events, "agent.delta")[0]!.data).toEqual({ agent: "router", text: ANSWER });
    expect(events[0]).toMatchObject({ data: { mode: "auto" } });
    expect(ofType(events, "agent.thought")[0]!.data).toEqual({ agent: "router", text: "Mode: answer. a question about me" });
    expect(ofType(events, "run.succeeded")[0]!.data).toEqual({ result: ANSWER, files: [] });
  });

  it("the direct answer joins the session like any other", async () => {
    const res = await client.request<SessionView>("GET", `/v1/sessions/${result.run.sessionId}`);
    expect(res.status).toBe(200);
    expect(res.body.messages.map((m: any) => [m.role, m.content])).toEqual([
      ["user", INPUT],
      ["assistant", ANSWER],
    ]);
  });
});

describe("the router chooses plan_solve", () => {
  const INPUT = `${marker("r-plan")} Compare two things.`;
  router.on("r-plan", (turn) => {
    switch (turn.role) {
      case "router":
        return choose({ mode: "plan_solve", reason: "two parts" });
      case "planner":
        if (last(turn).role === "tool") return answer("Plan noted.");
        if (last(turn).content.includes("Results of step 1")) return callTools([{ name: "planning", arguments: { command: "finish" } }]);
        return callTools([
          {
            name: "planning",
            arguments: { command: "create", title: "Compare", steps: [{ title: "Look", tasks: ["Look at one", "Look at two"] }] },
          },
        ]);
      case "executor":
        return answer(last(turn).content.endsWith("Look at one") ? "One is big." : "Two is small.");
      default:
        return answer("One is big and two is small.");
    }
  });
  let run: any;
  let events: Events;
  beforeAll(async () => {
    ({ run, events } = await runToEnd({ input: INPUT, mode: "auto" }));
  });

  it("a plan is made and executed, and the summary answers", () => {
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.mode).toBe("plan_solve");
    expect(ofType(events, "agent.thought")[0]!.data).toEqual({ agent: "router", text: "Mode: plan_solve. two parts" });
    expect(run.plan).toMatchObject({
      title: "Compare",
      finished: true,
      steps: [{ title: "Look", tasks: ["Look at one", "Look at two"], status: "completed" }],
    });
    expect(ofType(events, "plan.updated").length).toBeGreaterThan(0);
    expect(run.tasks.map((t: any) => [t.taskId, t.result])).toEqual([
      ["s1.t1", "One is big."],
      ["s1.t2", "Two is small."],
    ]);
    expect(run.result).toBe("One is big and two is small.");
  });

  it("asked the router once, first, and then the planner with the planning tool", () => {
    const turns = router.of("r-plan");
    expect(turns[0]!.role).toBe("router");
    expect(turns.filter((t) => t.role === "router")).toHaveLength(1);
    expect(turns[1]!.role).toBe("planner");
    // The planner may also ask the user (before there is a plan).
    expect(turns[1]!.tools).toEqual(["planning", "ask_user"]);
    expect(last(turns[1]!).content).toBe(`Request: ${INPUT}`);
  });
});

describe("the router chooses react", () => {
  router.on("r-react", (turn) => {
    if (turn.role === "router") return choose({ mode: "react", reason: "one thing" });
    return last(turn).role === "tool" ? answer("It is 42.") : callTools([{ name: "calculator", arguments: { expression: "6*7" } }]);
  });

  it("one agent with tools answers; no planner", async () => {
    const { run, events } = await runToEnd({ input: `${marker("r-react")} What is 6*7?` });
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.mode).toBe("react");
    expect(run.result).toBe("It is 42.");
    expect(run.plan).toBeNull();
    const roles = router.of("r-react").map((t) => t.role);
    expect(roles).toEqual(["router", "react", "react"]);
    expect(router.of("r-react")[1]!.tools).toEqual(expect.arrayContaining(["calculator", "ask_user"]));
    expect(router.of("r-react")[1]!.tools).not.toContain("choose_mode");
    expect(ofType(events, "tool.result")[0]!.data).toMatchObject({ agent: "react", output: "6*7 = 42" });
  });
});

describe("when the router gives no usable choice, ReAct handles the request", () => {
  router.on("r-noanswer", (turn) =>
    turn.role === "router" ? choose({ mode: "answer", reason: "forgot the answer" }) : answer("Handled by the agent."),
  );
  router.on("r-text", (turn) => (turn.role === "router" ? answer("I think plan_solve.") : answer("Handled by the agent.")));
  router.on("r-down", (turn) =>
    turn.role === "router" ? { status: 400, message: "the router is down" } : answer("Handled by the agent."),
  );

  it.each([
    ["answer without an answer", "r-noanswer", /chose to answer but gave no answer/],
    ["an error", "r-down", /router failed/],
  ])("%s", async (_name, name, reason) => {
    const { run, events } = await runToEnd({ input: `${marker(name)} Do something.` });
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.mode).toBe("react");
    expect(run.result).toBe("Handled by the agent.");
    expect(ofType(events, "agent.thought")[0]!.data.text).toMatch(reason);
    expect(router.of(name).map((t) => t.role)).toEqual(["router", "react"]);
  });
});

describe("the router answers with text instead of a tool call", () => {
  it("that text is the direct answer, streamed as the router's agent.delta events before run.succeeded", async () => {
    const { run, events } = await runToEnd({ input: `${marker("r-text")} Do something.` });
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.mode).toBe("answer");
    expect(run.result).toBe("I think plan_solve.");
    const deltas = ofType(events, "agent.delta");
    expect(deltas.map((e) => e.data.agent)).toEqual(deltas.map(() => "router"));
    expect(deltas.map((e) => e.data.text).join("")).toBe("I think plan_solve.");
    expect(events.indexOf(deltas.at(-1)!)).toBeLessThan(events.findIndex((e) => e.type === "run.succeeded"));
    expect(router.of("r-text").map((t) => t.role)).toEqual(["router"]);
  });
});

describe("modes fixed by the request skip the router", () => {
  router.on("r-fixed", (turn) =>
    turn.role === "router" ? { status: 400, message: "the router must not be asked" } : answer("Done without routing."),
  );

  it.each([
    ["mode react", { mode: "react" }, "react"],
    ["deepThink false", { deepThink: false }, "react"],
  ])("%s", async (_name, body, mode) => {
    const before = router.of("r-fixed").length;
    const { run } = await runToEnd({ input: `${marker("r-fixed")} Do it.`, ...body });
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.mode).toBe(mode);
    expect(
      router
        .of("r-fixed")
        .slice(before)
        .map((t) => t.role),
    ).toEqual(["react"]);
  });
});

describe("the router sees the session's earlier turns", () => {
  const SESSION = `route-${Date.now().toString(36)}`;
  router.on("r-s1", () => answer("Paris is the capital of France."));
  router.on("r-s2", (turn) => {
    if (turn.role !== "router") return { status: 400, message: "only the router" };
    const knows = turn.messages.some((m) => m.role === "assistant" && m.content.includes("Paris"));
    return choose({
      mode: "answer",
      answer: knows ? "You asked about France; its capital is Paris." : "I do not know.",
      reason: "from the session",
    });
  });

  it("and can answer from them directly", async () => {
    const first = await runToEnd({ input: `${marker("r-s1")} What is the capital of France?`, mode: "react", sessionId: SESSION });
    expect(first.run.status).toBe("succeeded");
    const { run } = await runToEnd({ input: `${marker("r-s2")} What did I ask about?`, sessionId: SESSION });
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.mode).toBe("answer");
    expect(run.result).toBe("You asked about France; its capital is Paris.");
    const [request] = router.of("r-s2");
    expect(request!.messages.map((m) => [m.role, m.content])).toEqual([
      ["system", expect.any(String)],
      ["user", `${marker("r-s1")} What is the capital of France?`],
      ["assistant", "Paris is the capital of France."],
      ["user", `${marker("r-s2")} What did I ask about?`],
    ]);
  });
});

describe("the offline model", () => {
  it('answers "hello" directly, without an agent', async () => {
    const before = router.turns.length;
    const { run, events } = await runToEnd({ input: "hello" });
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.mode).toBe("answer");
    expect(run.result).toMatch(/^Hello!/);
    const turns = router.turns.slice(before);
    expect(turns.map((t) => t.role)).toEqual(["router"]);
    expect(events.some((e) => e.type === "tool.called" || e.type === "plan.updated")).toBe(false);
  });

  it.each(["Hello, who are you?", "What is Stepwise?", "what can you do?"])(
    'answers "%s" directly, about Stepwise, without an agent',
    async (input) => {
      const before = router.turns.length;
      const { run, events } = await runToEnd({ input });
      expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
      expect(run.mode).toBe("answer");
      expect(run.result).toContain("I am Stepwise");
      expect(router.turns.slice(before).map((t) => t.role)).toEqual(["router"]);
      expect(events.some((e) => e.type === "tool.called" || e.type === "task.started")).toBe(false);
    },
  );

  it("routes a greeting followed by a task to an agent, not to a direct answer", async () => {
    const { run, events } = await runToEnd({ input: "Hello, compute 17*23" });
    expect(run.mode).toBe("react");
    expect(events.some((e) => e.type === "tool.called" && e.data.tool === "calculator")).toBe(true);
  });

  it("a plan rejected with a reason: the planner model is told the reason, and the offline planner drops the step it names", async () => {
    const { runId } = await client.submit({
      input: "Compute 17*23 and (120/8)+2^5, then write a short report",
      mode: "plan_solve",
      approval: { plan: true },
    });
    const first = (await client.waitForPending(runId, 1)).pending[0];
    expect((first.arguments as PlanArguments).plan.steps.map((s: any) => s.title)).toEqual(["Gather the facts", "Write the report"]);
    const plannerTurns = router.turns.filter((t) => t.role === "planner").length;
    expect((await client.decide(runId, first.interruptId, { decision: "reject", message: "no report, just the numbers" })).status).toBe(
      202,
    );

    const second = (await client.waitForPending(runId, 1)).pending[0];
    expect(second.interruptId).not.toBe(first.interruptId);
    expect((second.arguments as PlanArguments).plan.steps.map((s: any) => s.title)).toEqual(["Gather the facts"]);
    // What the model was sent: the person's reason, in the planner's prompt.
    const revision = router.turns.filter((t) => t.role === "planner").slice(plannerTurns)[0]!;
    expect(textOf(last(revision).content)).toContain("The user rejected this plan: no report, just the numbers.");

    expect((await client.decide(runId, second.interruptId, { decision: "approve" })).status).toBe(202);
    const { run, events } = await client.waitForEnd(runId, 90_000);
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(ofType(events, "tool.called").map((e) => e.data.tool)).not.toContain("write_artifact");
    // The planner's words reach clients once, as they stream (agent.delta; no agent.thought repeating them).
    const plannerText = ofType(events, "agent.delta")
      .filter((e) => e.data.agent === "planner")
      .map((e) => e.data.text)
      .join("");
    expect(plannerText).toContain('dropped "Write the report"');
  });

  it("a plan rejected with a reason that names no step gets a step for that feedback", async () => {
    const { runId } = await client.submit({ input: "Compute 2+2 and 3+3", mode: "plan_solve", approval: { plan: true } });
    const first = (await client.waitForPending(runId, 1)).pending[0];
    await client.decide(runId, first.interruptId, { decision: "reject", message: "Add more detail" });
    const second = (await client.waitForPending(runId, 1)).pending[0];
    const titles = (second.arguments as PlanArguments).plan.steps.map((s: any) => s.title);
    expect(titles).toEqual([
      ...(first.arguments as PlanArguments).plan.steps.map((s: any) => s.title),
      "Address the feedback: Add more detail",
    ]);
    expect((await client.request("POST", `/v1/runs/${runId}/cancel`)).status).toBe(202);
  });
});
