import { DynamoDBDocumentClient, GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentClients } from "../../functions/toolClients.js";
import { workTools } from "../../functions/workTools.js";
import { reactPrompt } from "../../shared/agent/prompts.js";
import { StepwiseClient } from "../../shared/apiClient/client.js";
import type { RunEvent } from "../../shared/contracts/events.js";
import type { CreateRunResponse, SessionView } from "../../shared/contracts/responses.js";
import type { ChatMessage } from "../../shared/llm/types.js";
import { tokenCounterFor } from "../../shared/memory/tokens.js";
import { settingsFromEnv } from "../../shared/settings.js";
import { keys } from "../../shared/store/keys.js";
import { agentTools } from "../../shared/tools/builtins.js";
import { ToolRegistry } from "../../shared/tools/registry.js";
import { Behind } from "../support/aws.js";
import { Client, type ErrorBody } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { type ScriptedModel, startScriptedModel } from "../support/scriptedModel.js";
import { answer, callTools, jsonAnswer, jsonCalls, last, marker, ScriptRouter, type Turn } from "../support/scriptedRoles.js";

/**
 * Agent memory and context, end to end against the local stack with a scripted model: sessions
 * across runs, the fork/merge of executor memory, parallel tool calls, per-run budgets, model
 * faults, long tool outputs, JSON contract mode and the context budget. Two stacks: one with
 * native tool calling and the default context budget, one in JSON contract mode with a small one.
 */

type Events = RunEvent[];
const ofType = <T extends RunEvent["type"]>(events: Events, type: T) =>
  events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
const userText = (turn: Turn) => turn.messages.filter((m) => m.role === "user").map((m) => m.content);
const allText = (turn: Turn) => turn.messages.map((m) => m.content).join("\n");
const toolMessages = (turn: Turn) => turn.messages.filter((m) => m.role === "tool");

async function runToEnd(client: Client, body: Record<string, unknown>): Promise<{ runId: string; run: any; events: Events }> {
  const { runId } = await client.submit(body);
  const { run, events } = await client.waitForEnd(runId, 90_000);
  return { runId, run, events };
}

describe("with native tool calling", () => {
  const router = new ScriptRouter();
  let scripted: ScriptedModel;
  let stack: RunningStack;
  let client: Client;
  let other: Client;

  beforeAll(async () => {
    scripted = await startScriptedModel(router.script);
    stack = await startStack({ OPENAI_BASE_URL: scripted.url, OPENAI_API_KEY: "test", STEPWISE_MODEL: "scripted" });
    client = new Client(stack.url, stack.apiKey);
    other = new Client(stack.url, stack.keys.other!);
  });

  afterAll(async () => {
    await stack?.stop();
    await scripted?.close();
  });

  describe("sessions", () => {
    const SESSION = `mem-${Date.now().toString(36)}`;
    const INPUT_1 = `${marker("s1")} Remember this for later: the secret word is heliotrope.`;
    const INPUT_2 = `${marker("s2")} What was the secret word?`;
    const INPUT_3 = `${marker("s3")} What was the secret word?`;
    const ANSWER_1 = "The secret word is heliotrope.";
    // The model "recalls" only what its messages show it: an earlier answer naming the word.
    const recall = (turn: Turn) =>
      answer(
        turn.messages.some((m) => m.role === "assistant" && m.content.includes("heliotrope"))
          ? "You told me: the secret word is heliotrope."
          : "I know of no secret word.",
      );
    router
      .on("s1", () => answer(ANSWER_1))
      .on("s2", recall)
      .on("s3", recall)
      .on("s-other", recall);

    let first: Awaited<ReturnType<typeof runToEnd>>;
    let second: Awaited<ReturnType<typeof runToEnd>>;

    beforeAll(async () => {
      first = await runToEnd(client, { input: INPUT_1, mode: "react", sessionId: SESSION });
      second = await runToEnd(client, { input: INPUT_2, mode: "react", sessionId: SESSION });
    });

    it("a second run in the session sees the first run's question and answer, in order, before its own", () => {
      expect(first.run.status, JSON.stringify(first.run.error)).toBe("succeeded");
      expect(first.run.result).toBe(ANSWER_1);
      expect(first.run.sessionId).toBe(SESSION);
      const [request] = router.of("s2", "react");
      expect(request).toBeDefined();
      expect(request!.messages.map((m) => [m.role, m.content])).toEqual([
        ["system", expect.any(String)],
        ["user", INPUT_1],
        ["assistant", ANSWER_1],
        ["user", INPUT_2],
      ]);
      expect(second.run.status, JSON.stringify(second.run.error)).toBe("succeeded");
      expect(second.run.result).toBe("You told me: the secret word is heliotrope.");
    });

    it("the first run saw no earlier turns", () => {
      const [request] = router.of("s1", "react");
      expect(request!.messages.map((m) => m.role)).toEqual(["system", "user"]);
    });

    it("GET /v1/sessions/{id} lists the four messages of both runs in order", async () => {
      const res = await client.request<SessionView>("GET", `/v1/sessions/${SESSION}`);
      expect(res.status).toBe(200);
      expect(res.body.sessionId).toBe(SESSION);
      expect(res.body.messages.map((m: any) => [m.seq, m.role, m.content, m.runId])).toEqual([
        [1, "user", INPUT_1, first.runId],
        [2, "assistant", ANSWER_1, first.runId],
        [3, "user", INPUT_2, second.runId],
        [4, "assistant", second.run.result, second.runId],
      ]);
    });

    it("another tenant can neither read nor delete the session, and its runs with the same id do not see it", async () => {
      expect((await other.request<SessionView>("GET", `/v1/sessions/${SESSION}`)).status).toBe(404);
      expect((await other.request("DELETE", `/v1/sessions/${SESSION}`)).status).toBe(404);
      expect((await client.request<SessionView>("GET", `/v1/sessions/${SESSION}`)).body.messages).toHaveLength(4);

      const theirs = await runToEnd(other, { input: `${marker("s-other")} What was the secret word?`, mode: "react", sessionId: SESSION });
      expect(theirs.run.status).toBe("succeeded");
      expect(theirs.run.result).toBe("I know of no secret word.");
      const [request] = router.of("s-other", "react");
      expect(allText(request!)).not.toContain("heliotrope");
      expect((await client.request<SessionView>("GET", `/v1/sessions/${SESSION}`)).body.messages).toHaveLength(4);
    });

    it("DELETE forgets the session: 204, then 404, and a later run in it starts afresh", async () => {
      const deleted = await client.request("DELETE", `/v1/sessions/${SESSION}`);
      expect(deleted.status).toBe(204);
      expect((await client.request<SessionView>("GET", `/v1/sessions/${SESSION}`)).status).toBe(404);
      expect((await client.request("DELETE", `/v1/sessions/${SESSION}`)).status).toBe(404);

      const third = await runToEnd(client, { input: INPUT_3, mode: "react", sessionId: SESSION });
      expect(third.run.status).toBe("succeeded");
      const [request] = router.of("s3", "react");
      expect(request!.messages.map((m) => [m.role, m.content])).toEqual([
        ["system", expect.any(String)],
        ["user", INPUT_3],
      ]);
      expect(third.run.result).toBe("I know of no secret word.");
      // The new turn starts the session again.
      const res = await client.request<SessionView>("GET", `/v1/sessions/${SESSION}`);
      expect(res.body.messages.map((m: any) => [m.seq, m.role, m.runId])).toEqual([
        [expect.any(Number), "user", third.runId],
        [expect.any(Number), "assistant", third.runId],
      ]);
    });

    it("an unknown session id is 404; a malformed one is 400", async () => {
      expect((await client.request("GET", "/v1/sessions/never-used-session")).status).toBe(404);
      expect((await client.request<SessionView>("GET", `/v1/sessions/${"x".repeat(65)}`)).status).toBe(400);
    });
  });

  describe("files across a session", () => {
    const SESSION = `files-${Date.now().toString(36)}`;
    const CSV = "region,sales\nnorth,120\nsouth,95\n";
    // The model reads notes.csv when its prompt names it, and reports what it read.
    const readNotes = (turn: Turn) => {
      const result = toolMessages(turn).at(-1);
      if (result) return answer(`I read notes.csv: ${result.content}`);
      const listed = turn.messages[0]!.content.includes("- notes.csv (");
      return listed ? callTools([{ name: "read_artifact", arguments: { filename: "notes.csv" } }]) : answer("No notes.csv here.");
    };
    router
      .on("f1", () => answer("I have the sales figures."))
      .on("f2", readNotes)
      .on("f-other", (turn) =>
        toolMessages(turn).length ? answer("done") : callTools([{ name: "read_artifact", arguments: { filename: "notes.csv" } }]),
      );

    it("a follow-up turn reads the file uploaded in the first turn, with no file attached; another tenant never sees it", async () => {
      const uploaded = await new StepwiseClient(stack.url, stack.apiKey).uploadFile("notes.csv", new TextEncoder().encode(CSV));
      const first = await runToEnd(client, {
        input: `${marker("f1")} Here are the sales.`,
        mode: "react",
        sessionId: SESSION,
        files: [uploaded.fileId],
      });
      expect(first.run.status, JSON.stringify(first.run.error)).toBe("succeeded");

      const second = await runToEnd(client, { input: `${marker("f2")} What were the sales by region?`, mode: "react", sessionId: SESSION });
      expect(second.run.status, JSON.stringify(second.run.error)).toBe("succeeded");
      // read_artifact reads a CSV file as a Markdown table.
      expect(second.run.result).toContain("I read notes.csv: | region | sales |");
      expect(second.run.result).toContain("| north | 120 |");
      const [asked] = router.of("f2", "react");
      expect(asked!.messages[0]!.content).toMatch(/- notes\.csv \(text\/csv, \d+ bytes, From an earlier turn of this session/);
      expect(second.run.files.map((f: any) => f.name)).toContain("notes.csv");

      // The same session id under another tenant is another session: nothing of this one is carried.
      const theirs = await runToEnd(other, { input: `${marker("f-other")} Read notes.csv.`, mode: "react", sessionId: SESSION });
      expect(theirs.run.status).toBe("succeeded");
      const [tried] = router.of("f-other", "react");
      expect(tried!.messages[0]!.content).not.toContain("notes.csv");
      expect(theirs.run.files.map((f: any) => f.name)).not.toContain("notes.csv");
      const read = ofType(theirs.events, "tool.result").find((e) => e.data.tool === "read_artifact")!;
      expect(read.data.output).toMatch(/^Error: no file named notes\.csv/);
      expect(read.data.output).not.toContain("north");
    });
  });

  describe("fork and merge of a plan step whose tasks finish out of order", () => {
    const INPUT = `${marker("fork")} Research three topics, then write a report.`;
    const TASKS = { t1: "Research alpha", t2: "Research beta", t3: "Research gamma" } as const;
    const RESULTS = { t1: "Alpha result: A-111", t2: "Beta result: B-222", t3: "Gamma result: G-333" } as const;
    const REPORT_TASK = "Write the report";
    const taskOf = (turn: Turn) => /Your task: (.*)$/m.exec(turn.messages.find((m) => m.role === "user")?.content ?? "")?.[1];
    // The text in many pieces, so `slowMs` (paid before every chunk) adds up to a clear delay.
    const slowly = (text: string, pieces: number, slowMs: number) => ({
      text: Array.from({ length: pieces }, (_, i) =>
        text.slice(Math.floor((i * text.length) / pieces), Math.floor(((i + 1) * text.length) / pieces)),
      ),
      slowMs,
    });

    router.on("fork", (turn) => {
      const lastMessage = last(turn);
      if (turn.role === "planner") {
        if (lastMessage.role === "tool") return answer("Plan noted.");
        if (lastMessage.content.includes("Results of step 2")) return callTools([{ name: "planning", arguments: { command: "finish" } }]);
        if (lastMessage.content.includes("Results of step 1")) return answer("Step 1 is done; go on.");
        return callTools([
          {
            name: "planning",
            arguments: {
              command: "create",
              title: "Three topics",
              steps: [
                { title: "Research", tasks: Object.values(TASKS) },
                { title: "Report", tasks: [REPORT_TASK] },
              ],
            },
          },
        ]);
      }
      if (turn.role === "executor") {
        switch (taskOf(turn)) {
          case TASKS.t1: // slow: a slow tool call first, then a slow answer
            return lastMessage.role === "tool"
              ? slowly(RESULTS.t1, 10, 200)
              : { toolCalls: [{ name: "calculator", arguments: { expression: "1+1" } }], slowMs: 300 };
          case TASKS.t2:
            return slowly(RESULTS.t2, 10, 100);
          case TASKS.t3:
            return answer(RESULTS.t3);
          case REPORT_TASK:
            return answer("Report written.");
        }
      }
      if (turn.role === "summarizer") return answer("All three topics were researched and reported.");
      return { status: 400, message: `unexpected ${turn.role} request` };
    });

    let runId: string;
    let run: any;
    let events: Events;
    beforeAll(async () => {
      ({ runId, run, events } = await runToEnd(client, { input: INPUT, mode: "plan_solve" }));
    });

    const step1Executors = () => router.of("fork", "executor").filter((t) => taskOf(t) !== REPORT_TASK);

    it("the run succeeds with every task of step 1 done", () => {
      expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
      const step1 = run.tasks.filter((t: any) => t.iteration === 0);
      expect(step1.map((t: any) => [t.taskId, t.title, t.status, t.result])).toEqual([
        ["s1.t1", TASKS.t1, "succeeded", expect.stringContaining(RESULTS.t1)],
        ["s1.t2", TASKS.t2, "succeeded", expect.stringContaining(RESULTS.t2)],
        ["s1.t3", TASKS.t3, "succeeded", expect.stringContaining(RESULTS.t3)],
      ]);
    });

    it("the tasks finished t3, t2, t1 (the task.completed events' order)", () => {
      const completed = ofType(events, "task.completed").filter((e) => e.data.iteration === 0);
      expect(completed.map((e) => e.data.taskId)).toEqual(["s1.t3", "s1.t2", "s1.t1"]);
    });

    it("the next planning request lists the results in task order t1, t2, t3", () => {
      const planning = router.of("fork", "planner").find((t) => last(t).content.includes("Results of step 1"));
      expect(planning).toBeDefined();
      const text = last(planning!).content;
      const lines = text.split("\n").filter((l) => l.startsWith("- ["));
      expect(lines).toEqual([
        `- [s1.t1] ${TASKS.t1}: ${RESULTS.t1}`,
        `- [s1.t2] ${TASKS.t2}: ${RESULTS.t2}`,
        `- [s1.t3] ${TASKS.t3}: ${RESULTS.t3}`,
      ]);
    });

    it("each executor of step 1 was sent the request, the plan and its own task, never a sibling's result", () => {
      const requests = step1Executors();
      expect(new Set(requests.map(taskOf))).toEqual(new Set(Object.values(TASKS)));
      for (const request of requests) {
        const own = request.messages.find((m) => m.role === "user")!.content;
        expect(own).toContain(`Request: ${INPUT}`);
        expect(own).toContain("Plan: Three topics");
        expect(own).toMatch(new RegExp(`Your task: ${taskOf(request)}$`));
        expect(own).not.toContain("Results so far");
        for (const result of Object.values(RESULTS)) expect(allText(request), `${taskOf(request)} sees "${result}"`).not.toContain(result);
      }
    });

    it("t1's second model call came after t2 and t3 had finished, and still saw only its own work", () => {
      const t1Calls = step1Executors().filter((t) => taskOf(t) === TASKS.t1);
      expect(t1Calls).toHaveLength(2);
      const completedAt = (taskId: string) =>
        Date.parse(ofType(events, "task.completed").find((e) => e.data.iteration === 0 && e.data.taskId === taskId)!.at);
      expect(t1Calls[1]!.at).toBeGreaterThan(completedAt("s1.t2"));
      expect(t1Calls[1]!.at).toBeGreaterThan(completedAt("s1.t3"));
      expect(t1Calls[1]!.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
      expect(t1Calls[1]!.messages[1]).toEqual(t1Calls[0]!.messages[1]);
    });

    it("each executor's starting memory comes from the step's context, kept in the table (a retried executor is sent the same)", async () => {
      const behind = new Behind(stack.endpoints!);
      try {
        const doc = DynamoDBDocumentClient.from(behind.dynamo);
        const { Item: step } = await doc.send(new GetCommand({ TableName: stack.endpoints!.tableName, Key: keys.step(runId, 0) }));
        expect(step, "the step's context").toBeDefined();
        expect(step!.tasks.map((t: { text: string }) => t.text)).toEqual(Object.values(TASKS));
        for (const title of Object.values(TASKS)) {
          const sent = step1Executors().find((t) => taskOf(t) === title)!.messages[1]!.content;
          expect(sent).toContain(`Request: ${step!.request}`);
          expect(sent.endsWith(`Your task: ${title}`)).toBe(true);
        }
      } finally {
        behind.destroy();
      }
    });

    it("the next step's executor and the summarizer receive the results in task order", () => {
      const report = router.of("fork", "executor").find((t) => taskOf(t) === REPORT_TASK)!;
      const memo = report.messages[1]!.content;
      const at = (s: string) => memo.indexOf(s);
      expect(memo).toContain("Results so far:");
      expect(at(RESULTS.t1)).toBeGreaterThan(at("Results so far:"));
      expect(at(RESULTS.t1)).toBeLessThan(at(RESULTS.t2));
      expect(at(RESULTS.t2)).toBeLessThan(at(RESULTS.t3));

      const [summary] = router.of("fork", "summarizer");
      const text = last(summary!).content;
      expect(text.indexOf(RESULTS.t1)).toBeGreaterThan(text.indexOf("Task results:"));
      expect(text.indexOf(RESULTS.t1)).toBeLessThan(text.indexOf(RESULTS.t2));
      expect(text.indexOf(RESULTS.t2)).toBeLessThan(text.indexOf(RESULTS.t3));
      expect(text.indexOf(RESULTS.t3)).toBeLessThan(text.indexOf("Report written."));
    });
  });

  describe("parallel tool calls", () => {
    const CALLS = [
      { id: "call_p1", expression: "1+2", output: "1+2 = 3" },
      { id: "call_p2", expression: "3*4", output: "3*4 = 12" },
      { id: "call_p3", expression: "10-7", output: "10-7 = 3" },
    ];
    router.on("par", (turn) =>
      last(turn).role === "tool"
        ? answer("3, 12 and 3.")
        : callTools(CALLS.map((c) => ({ id: c.id, name: "calculator", arguments: { expression: c.expression } }))),
    );
    let run: any;
    let events: Events;
    beforeAll(async () => {
      ({ run, events } = await runToEnd(client, { input: `${marker("par")} Compute 1+2, 3*4 and 10-7.`, mode: "react" }));
    });

    it("three calls of one response come back as three tool results, in call order, in the next request", () => {
      expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
      expect(run.result).toBe("3, 12 and 3.");
      const requests = router.of("par", "react");
      expect(requests).toHaveLength(2);
      const tail = requests[1]!.messages.slice(-4);
      expect(tail[0]!.role).toBe("assistant");
      expect(tail[0]!.tool_calls!.map((c) => c.id)).toEqual(CALLS.map((c) => c.id));
      expect(tail.slice(1).map((m) => [m.role, m.tool_call_id, m.content])).toEqual(CALLS.map((c) => ["tool", c.id, c.output]));
    });

    it("records tool.called and tool.result for all three, results in call order", () => {
      expect(ofType(events, "tool.called").map((e) => [e.data.callId, (e.data.arguments as any).expression])).toEqual(
        CALLS.map((c) => [c.id, c.expression]),
      );
      expect(ofType(events, "tool.result").map((e) => [e.data.callId, e.data.ok, e.data.output])).toEqual(
        CALLS.map((c) => [c.id, true, c.output]),
      );
      expect(run.usage.toolCalls).toBe(3);
      expect(run.usage.llmCalls).toBe(2);
    });
    // How many run at once (TOOL_CONCURRENCY) cannot be seen from outside with built-in tools that
    // finish in microseconds; test/unit/shared/agent/loop.test.ts observes it with tools that wait.
  });

  describe("budgets", () => {
    router.on("rounds", (turn, turns) => {
      // The rounds are spent: the last request offers no tools and asks for the delivery.
      if (turn.tools.length === 0) return answer("Counted to 2 with the calculator; not done: counting on, the rounds ran out.");
      const n = turns.length;
      return callTools([{ name: "calculator", arguments: { expression: `${n}+1` } }], `Working on step ${n}.`);
    });
    router.on("iterations", (turn) => {
      const lastMessage = last(turn);
      if (turn.role === "planner") {
        if (lastMessage.role === "tool") return answer("Plan noted.");
        return callTools([
          { name: "planning", arguments: { command: "create", title: "Two steps", steps: ["Do step one", "Do step two"] } },
        ]);
      }
      if (turn.role === "executor") return answer("Step one done: 1-OK.");
      return answer("Summary: step one was done.");
    });

    it("maxRounds: 2 ends a ReAct run that keeps calling tools with the agent's delivered summary and the reason recorded", async () => {
      const { run, events } = await runToEnd(client, {
        input: `${marker("rounds")} Keep counting.`,
        mode: "react",
        budgets: { maxRounds: 2 },
      });
      expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
      // Two rounds with tools, then one call without tools that delivers what was and was not done.
      const turns = router.of("rounds");
      expect(turns.map((t) => t.tools.length > 0)).toEqual([true, true, false]);
      expect(last(turns[2]!)).toMatchObject({ role: "user", content: expect.stringMatching(/^You have used all 2 rounds of your budget/) });
      expect(toolMessages(turns[2]!)).toHaveLength(2);
      expect(run.result).toBe("Counted to 2 with the calculator; not done: counting on, the rounds ran out.");
      expect(run.stopReason).toBe("Stopped at the round budget (2 rounds).");
      expect(ofType(events, "tool.called")).toHaveLength(2);
      expect(events.at(-1)).toMatchObject({
        type: "run.succeeded",
        data: { result: run.result, stopReason: "Stopped at the round budget (2 rounds)." },
      });
    });

    it("maxPlanIterations: 1 stops a plan after one step; the summary says the plan iteration budget was reached", async () => {
      const { run } = await runToEnd(client, {
        input: `${marker("iterations")} Do two steps.`,
        mode: "plan_solve",
        budgets: { maxPlanIterations: 1 },
      });
      expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
      expect(run.result).toContain("Summary: step one was done.");
      expect(run.result).toMatch(/plan iteration budget \(1\) was reached/);
      expect(run.tasks.map((t: any) => [t.iteration, t.title])).toEqual([[0, "Do step one"]]);
      expect(run.plan.steps.map((s: any) => s.status)).toEqual(["completed", "not_started"]);
      // The planner was asked once (plus its follow-up after the tool call), never after the step.
      expect(router.of("iterations", "planner").every((t) => !last(t).content.includes("Results of step"))).toBe(true);
      const [summary] = router.of("iterations", "summarizer");
      expect(last(summary!).content).toMatch(/Stopped early: The plan iteration budget \(1\)/);
    });

    it.each([
      ["maxRounds 0", { maxRounds: 0 }],
      ["maxRounds 51", { maxRounds: 51 }],
      ["maxRounds 2.5", { maxRounds: 2.5 }],
      ['maxRounds "x"', { maxRounds: "x" }],
      ["maxPlanIterations 0", { maxPlanIterations: 0 }],
      ["maxPlanIterations 21", { maxPlanIterations: 21 }],
      ["an unknown key", { maxTokens: 5 }],
      ["not an object", 5],
    ])("rejects budgets with %s: 400", async (_name, budgets) => {
      const res = await client.request<ErrorBody>("POST", "/v1/runs", { input: "Hello", mode: "react", budgets });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
      expect(JSON.stringify(res.body.error.details)).toContain("body.budgets");
    });

    it("accepts the limits themselves (20 plan iterations, 50 rounds)", async () => {
      const res = await client.request<CreateRunResponse>("POST", "/v1/runs", {
        input: `${marker("limits")} Hello`,
        mode: "react",
        budgets: { maxPlanIterations: 20, maxRounds: 50 },
      });
      expect(res.status).toBe(202);
      const { run } = await client.waitForEnd(res.body.runId);
      expect(run.status).toBe("succeeded");
    });
  });

  describe("model faults", () => {
    router.on("fault500", (turn) => {
      if (turn.role === "planner") {
        if (last(turn).role === "tool") return answer("Plan noted.");
        if (last(turn).content.includes("Results of step 1")) return callTools([{ name: "planning", arguments: { command: "finish" } }]);
        return callTools([
          { name: "planning", arguments: { command: "create", title: "Two", steps: [{ title: "Both", tasks: ["Find X", "Find Y"] }] } },
        ]);
      }
      if (turn.role === "executor") return answer(turn.messages[1]!.content.endsWith("Find X") ? "X is 11." : "Y is 22.");
      return { status: 500 }; // the summarizer, every time
    });
    router.on("fault429", (_turn, turns) =>
      turns.length === 1 ? { status: 429, retryAfter: 1 } : answer("Answered after the rate limit."),
    );

    it("a summarizer failing three times in a row (500s) still ends the run with the mechanical summary of the task results", async () => {
      const INPUT = `${marker("fault500")} Find X and Y.`;
      const { run, events } = await runToEnd(client, { input: INPUT, mode: "plan_solve" });
      expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
      expect(router.of("fault500", "summarizer")).toHaveLength(3); // the first try and the client's two retries
      expect(run.result).toBe(
        [`Request: ${INPUT}`, "", "Results of the tasks:", "- Find X (succeeded): X is 11.", "- Find Y (succeeded): Y is 22.", ""].join(
          "\n",
        ),
      );
      expect(ofType(events, "run.succeeded")[0]!.data.result).toBe(run.result);
    });

    it("a 429 with retry-after is retried after the pause, transparently", async () => {
      const { run, events } = await runToEnd(client, { input: `${marker("fault429")} Anything.`, mode: "react" });
      expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
      expect(run.result).toBe("Answered after the rate limit.");
      const [limited, retried] = router.of("fault429");
      expect(retried).toBeDefined();
      expect(retried!.request.messages).toEqual(limited!.request.messages);
      expect(retried!.at - limited!.at).toBeGreaterThanOrEqual(900);
      expect(run.usage.llmCalls).toBe(1);
      expect(events.some((e) => e.type === "run.failed")).toBe(false);
    });
  });

  describe("a 20,000-character table from step 1", () => {
    // 400 rows of 50 characters: nothing in it may be lost on the way to step 2.
    const TABLE = Array.from(
      { length: 400 },
      (_, i) => `| row ${String(i).padStart(3, "0")} | ${String(i * 7919).padStart(12, "0")} | ${"v".repeat(21)} |`,
    ).join("\n");
    router.on("table", (turn) => {
      const lastMessage = last(turn);
      if (turn.role === "planner") {
        if (lastMessage.role === "tool") return answer("Plan noted.");
        if (lastMessage.content.includes("Results of step 2")) return callTools([{ name: "planning", arguments: { command: "finish" } }]);
        if (lastMessage.content.includes("Results of step 1")) return answer("Go on.");
        const steps = [
          { title: "Collect", tasks: ["Collect the table"] },
          { title: "Analyse", tasks: ["Analyse the table"] },
        ];
        return callTools([{ name: "planning", arguments: { command: "create", title: "Collect, analyse", steps } }]);
      }
      if (turn.role === "executor")
        return answer(allText(turn).includes("Your task: Collect the table") ? TABLE : "Row 399 is the largest.");
      return answer("The table was collected and analysed.");
    });

    it("reaches step 2's executor whole, in its request", async () => {
      expect(TABLE.length).toBeGreaterThanOrEqual(20_000);
      const { run } = await runToEnd(client, { input: `${marker("table")} Collect a table, then analyse it.`, mode: "plan_solve" });
      expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
      const analyse = router.of("table", "executor").find((t) => allText(t).includes("Your task: Analyse the table"))!;
      const memo = analyse.messages.find((m) => m.role === "user")!.content;
      expect(memo).toContain(`- Collect the table: ${TABLE}\n`);
      expect(memo).not.toContain("[cut at");
    });
  });

  describe("a tool output over 10,000 characters", () => {
    const BIG = Array.from({ length: 250 }, (_, i) => `line ${String(i).padStart(3, "0")} ${"x".repeat(90)}`)
      .join("\n")
      .padEnd(25_000, "y");
    router.on("long", (turn) => {
      const results = toolMessages(turn).length;
      if (results === 0)
        return callTools([{ id: "call_big_write", name: "write_artifact", arguments: { filename: "big.txt", content: BIG } }]);
      if (results === 1) return callTools([{ id: "call_big_read", name: "read_artifact", arguments: { filename: "big.txt" } }]);
      return answer("I read the file.");
    });
    let run: any;
    let events: Events;
    beforeAll(async () => {
      ({ run, events } = await runToEnd(client, { input: `${marker("long")} Write a big file and read it back.`, mode: "react" }));
    });

    it("read_artifact reaches the model in a part under the cut, saying where to read on", () => {
      expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
      const requests = router.of("long", "react");
      expect(requests).toHaveLength(3);
      const result = last(requests[2]!);
      expect(result.role).toBe("tool");
      expect(result.tool_call_id).toBe("call_big_read");
      expect(result.content.length).toBeLessThanOrEqual(10_000);
      expect(result.content.startsWith(BIG.slice(0, 9_000))).toBe(true);
      expect(result.content).toContain("of 25000");
      expect(result.content).toContain('read_artifact {"filename": "big.txt", "offset": 9000}');
      expect(result.content).not.toContain("[Output truncated");
    });

    it("is not cut again, so no copy of the file is stored as a tool output", () => {
      const files = Object.fromEntries(run.files.map((f: any) => [f.name, f.bytes]));
      expect(files["big.txt"]).toBe(25_000);
      expect(run.files.some((f: any) => f.name.startsWith("tool-output-"))).toBe(false);
    });

    it("shows a preview in its tool.result event", () => {
      const [read] = ofType(events, "tool.result").filter((e) => e.data.callId === "call_big_read");
      expect(read!.data.ok).toBe(true);
      expect(read!.data.output.length).toBeLessThanOrEqual(2_000);
      expect(BIG.startsWith(read!.data.output)).toBe(true);
    });
  });

  it("never sent the model a tool result without its call, or a call without its results", () => {
    expect(router.turns.length).toBeGreaterThan(0);
    for (const turn of router.turns) {
      turn.messages.forEach((message, i) => {
        if (message.role !== "assistant" || !message.tool_calls) return;
        const results = [];
        for (let j = i + 1; turn.messages[j]?.role === "tool"; j++) results.push(turn.messages[j]!);
        expect(results.map((r) => r.tool_call_id).sort(), `request #${turn.index}`).toEqual(message.tool_calls.map((c) => c.id).sort());
      });
      turn.messages.forEach((message, i) => {
        if (message.role !== "tool") return;
        const call = turn.messages.slice(0, i).findLast((m) => m.role !== "tool");
        expect(
          call?.tool_calls?.map((c) => c.id),
          `request #${turn.index}`,
        ).toContain(message.tool_call_id);
      });
    }
  });
});

describe("in JSON contract mode, with a small context budget", () => {
  const router = new ScriptRouter(() => jsonAnswer("OK."));
  let scripted: ScriptedModel;
  let stack: RunningStack;
  let client: Client;

  // Session turns of about 1,500 tokens each. The budget leaves the ReAct agent room for its
  // system prompt, tools and current request plus one and a half earlier turns: the newest turn
  // fits, the one before does not. (Other agents' fixed parts differ by far less than half a turn.)
  const counter = tokenCounterFor("scripted");
  const INPUTS = [1, 2, 3, 4].map(
    (k) => `${marker(`ctx${k}`)} Notes of turn ${k}: ${Array.from({ length: 420 }, (_, i) => `item${k}x${i}`).join(" ")}`,
  );
  const ANSWERS = [1, 2, 3, 4].map((k) => `Noted turn ${k}.`);
  const unit = (message: ChatMessage) => counter.countMessages([message]) - counter.countMessages([]);
  const turnTokens = Math.max(...INPUTS.map((content) => unit({ role: "user", content })));
  const BUDGET =
    // The agent's whole catalog: the built-ins and the work tools the stack adds.
    counter.count(
      JSON.stringify([
        ...agentTools().specs(),
        ...new ToolRegistry(workTools(settingsFromEnv({ TABLE_NAME: "t" }), agentClients("us-east-1"))).specs(),
      ]),
    ) +
    counter.countMessages([
      { role: "system", content: reactPrompt({ files: [] }) },
      { role: "user", content: INPUTS[3]! },
    ]) +
    turnTokens +
    unit({ role: "assistant", content: ANSWERS[0]! }) +
    Math.floor(turnTokens / 2);

  beforeAll(async () => {
    scripted = await startScriptedModel(router.script);
    stack = await startStack({
      OPENAI_BASE_URL: scripted.url,
      OPENAI_API_KEY: "test",
      STEPWISE_MODEL: "scripted",
      STEPWISE_FUNCTION_CALL_MODE: "json",
      CONTEXT_BUDGET_TOKENS: String(BUDGET),
    });
    client = new Client(stack.url, stack.apiKey);
  });

  afterAll(async () => {
    await stack?.stop();
    await scripted?.close();
  });

  describe("JSON contract", () => {
    const FENCED = '```json\n{"tool_calls": [{"name": "calculator", "arguments": {"expression": "6*7"}}]}\n```';
    router.on("j-ok", (_turn, turns) => {
      if (turns.length === 1) return { malformed: "Let me use the calculator for this." };
      if (turns.length === 2) return { text: [FENCED] };
      return jsonAnswer("6*7 is 42.");
    });
    router.on("j-bad", () => ({ malformed: "I would rather chat than write JSON." }));

    it("a malformed reply, then a valid fenced JSON tool call: the tool runs and the run succeeds", async () => {
      const { run, events } = await runToEnd(client, { input: `${marker("j-ok")} What is 6*7?`, mode: "react" });
      expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
      expect(run.result).toBe("6*7 is 42.");
      const [called] = ofType(events, "tool.called");
      expect(called!.data).toMatchObject({ agent: "react", tool: "calculator", arguments: { expression: "6*7" } });
      expect(ofType(events, "tool.result").map((e) => [e.data.callId, e.data.ok, e.data.output])).toEqual([
        [called!.data.callId, true, "6*7 = 42"],
      ]);

      const [first, corrected, afterTool] = router.of("j-ok");
      const system = first!.messages[0]!;
      expect(system.role).toBe("system");
      expect(system.content).toContain("You call tools by replying with JSON");
      expect(first!.tools).toEqual(expect.arrayContaining(["calculator", "text_stats", "write_artifact", "read_artifact", "ask_user"]));
      // The bad reply goes back verbatim, with the parser's correction.
      expect(corrected!.messages.slice(0, -2)).toEqual(first!.messages);
      expect(corrected!.messages.slice(-2)).toEqual([
        { role: "assistant", content: "Let me use the calculator for this." },
        { role: "user", content: expect.stringMatching(/^Your reply could not be used: .*exactly one JSON object/) },
      ]);
      // The tool result reaches the model as a user message.
      expect(last(afterTool!)).toMatchObject({ role: "user", content: expect.stringContaining("Result of calculator") });
      expect(last(afterTool!).content).toContain("6*7 = 42");
      // Stream clients see the answer as text, never the contract's JSON.
      expect(
        ofType(events, "agent.delta")
          .map((e) => e.data.text)
          .join(""),
      ).toBe("6*7 is 42.");
    });

    it("three malformed replies in a row fail the run with a run.failed event naming the JSON contract", async () => {
      const { run, events } = await runToEnd(client, { input: `${marker("j-bad")} What is 6*7?`, mode: "react" });
      expect(run.status).toBe("failed");
      expect(router.of("j-bad")).toHaveLength(3);
      const failed = ofType(events, "run.failed");
      expect(failed).toHaveLength(1);
      expect(failed[0]!.data.error.message).toMatch(/JSON contract/);
      expect(run.error.message).toMatch(/JSON contract/);
      expect(events.at(-1)!.type).toBe("run.failed");
    });
  });

  describe("context budget across a session", () => {
    const SESSION = `ctx-${Date.now().toString(36)}`;
    for (let k = 1; k <= 3; k++) router.on(`ctx${k}`, () => jsonAnswer(ANSWERS[k - 1]!));
    router.on("ctx4", (turn) => {
      const lastMessage = last(turn);
      if (turn.role === "router") return jsonCalls([{ name: "choose_mode", arguments: { mode: "plan_solve", reason: "test" } }]);
      if (turn.role === "planner") {
        if (lastMessage.content.startsWith("Result of")) return jsonAnswer("Plan noted.");
        if (lastMessage.content.includes("Results of step 1")) return jsonCalls([{ name: "planning", arguments: { command: "finish" } }]);
        return jsonCalls([{ name: "planning", arguments: { command: "create", title: "One", steps: ["Note turn 4"] } }]);
      }
      if (turn.role === "executor") return jsonAnswer("Turn 4 noted.");
      return { text: ANSWERS[3]! };
    });

    const runs: any[] = [];
    beforeAll(async () => {
      for (let k = 1; k <= 3; k++) runs.push((await runToEnd(client, { input: INPUTS[k - 1]!, mode: "react", sessionId: SESSION })).run);
      runs.push((await runToEnd(client, { input: INPUTS[3]!, sessionId: SESSION })).run);
    });

    const present = (turn: Turn, k: number) => allText(turn).includes(`Notes of turn ${k}`);

    it("every run of the session succeeds", () => {
      expect(runs.map((r) => r.status)).toEqual(["succeeded", "succeeded", "succeeded", "succeeded"]);
      expect(runs.map((r) => r.result)).toEqual(ANSWERS);
    });

    it("an earlier turn that fits is kept", () => {
      const [request] = router.of("ctx2", "react");
      expect(userText(request!)).toEqual([INPUTS[0], INPUTS[1]]);
      expect(allText(request!)).toContain(ANSWERS[0]);
    });

    it("later requests drop the oldest turn whole and keep the newest and the current input", () => {
      const [request] = router.of("ctx3", "react");
      expect(present(request!, 1)).toBe(false);
      expect(allText(request!)).not.toContain(ANSWERS[0]); // no answer without its question
      expect(request!.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
      expect(userText(request!)).toEqual([INPUTS[1], INPUTS[2]]);
      expect(allText(request!)).toContain(ANSWERS[1]);
    });

    it("the planner of a later run drops the oldest turn too", () => {
      const planning = router.of("ctx4", "planner");
      expect(planning.length).toBeGreaterThan(0);
      for (const request of planning) {
        expect(present(request, 1)).toBe(false);
        expect(allText(request)).toContain("Notes of turn 4");
      }
    });

    it("the router of a later run drops the oldest turn too", () => {
      const [request] = router.of("ctx4", "router");
      expect(request).toBeDefined();
      expect(allText(request!)).toContain("Notes of turn 4");
      // Known bug: chooseMode (shared/agent/router.ts) sends the whole session history, unfitted.
      expect(present(request!, 1), `the router was sent ${request!.messages.length} messages, the oldest turn included`).toBe(false);
    });

    it("the summarizer of a later run drops the oldest turn too", () => {
      const [request] = router.of("ctx4", "summarizer");
      expect(request).toBeDefined();
      expect(allText(request!)).toContain("Notes of turn 4");
      // Known bug: summarize (shared/agent/summarizer.ts) sends the whole session history, unfitted.
      expect(present(request!, 1), `the summarizer was sent ${request!.messages.length} messages, the oldest turn included`).toBe(false);
    });
  });

  it("never sent the model `tools` (nor tool_choice) in JSON contract mode", () => {
    expect(router.turns.length).toBeGreaterThan(0);
    for (const turn of router.turns) {
      expect(turn.request.tools, `request #${turn.index}`).toBeUndefined();
      expect(turn.request.tool_choice, `request #${turn.index}`).toBeUndefined();
    }
  });
});
