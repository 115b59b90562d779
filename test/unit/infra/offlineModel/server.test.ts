import OpenAI from "openai";
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { respond } from "../../../../infra/offlineModel/brain.js";
import { findExpressions } from "../../../../infra/offlineModel/expressions.js";
import { createPlan } from "../../../../infra/offlineModel/planner.js";
import { type OfflineModel, startOfflineModel } from "../../../../infra/offlineModel/server.js";
import { plannerPrompt, reactPrompt, type ToolLine } from "../../../../shared/agent/prompts.js";
import { runCodeDescription } from "../../../../shared/tools/runCode.js";

const MODEL = "stepwise-offline";

const tool = (name: string, properties: Record<string, unknown>): ChatCompletionTool => ({
  type: "function",
  function: { name, description: name, parameters: { type: "object", properties } },
});
const chooseMode = tool("choose_mode", { mode: { type: "string", enum: ["react", "plan_solve"] }, reason: { type: "string" } });
const planning = tool("planning", { command: { type: "string" } });
const calculator = tool("calculator", { expression: { type: "string" } });
const textStats = tool("text_stats", { text: { type: "string" } });
const writeArtifact = tool("write_artifact", { filename: { type: "string" }, content: { type: "string" } });
const executorTools = [calculator, textStats, writeArtifact];

const system = (content: string): ChatCompletionMessageParam => ({ role: "system", content });
const user = (content: string): ChatCompletionMessageParam => ({ role: "user", content });

const line = (name: string, access: "read" | "write" = "read"): ToolLine => ({ name, description: `the ${name} tool.`, access });
/** The planner's system prompt as Stepwise builds it, listing what its executors can call. */
const plannerSystem = (tools = ["calculator", "text_stats", "write_artifact"], files: { name: string; contentType: string }[] = []) =>
  system(
    plannerPrompt({
      tools: tools.map((t) => line(t, t.startsWith("write") ? "write" : "read")),
      files: files.map((f) => ({ ...f, bytes: 10, origin: "Uploaded" })),
    }),
  );

const MULTI_REQUEST = "Compute 17*23 and (120/8)+2^5, then write a short report";

let model: OfflineModel;
let client: OpenAI;

beforeAll(async () => {
  model = await startOfflineModel({ port: 0 });
  client = new OpenAI({ baseURL: model.url, apiKey: "offline", maxRetries: 0 });
});
afterAll(() => model.close());

async function complete(messages: ChatCompletionMessageParam[], tools?: ChatCompletionTool[]): Promise<ChatCompletion> {
  return client.chat.completions.create({ model: MODEL, messages, ...(tools ? { tools } : {}) });
}

async function streamChunks(messages: ChatCompletionMessageParam[], tools?: ChatCompletionTool[]): Promise<ChatCompletionChunk[]> {
  const stream = await client.chat.completions.create({
    model: MODEL,
    messages,
    ...(tools ? { tools } : {}),
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

/** Rebuilds content and tool calls from raw chunks, as a client would. */
function reassemble(chunks: ChatCompletionChunk[]) {
  let content = "";
  const calls: Array<{ id: string; type: string; function: { name: string; arguments: string } }> = [];
  let finishReason: string | null = null;
  for (const choice of chunks.flatMap((chunk) => chunk.choices)) {
    content += choice.delta.content ?? "";
    for (const part of choice.delta.tool_calls ?? []) {
      if (part.id) calls[part.index] = { id: part.id, type: part.type!, function: { name: part.function!.name!, arguments: "" } };
      calls[part.index]!.function.arguments += part.function?.arguments ?? "";
    }
    finishReason = choice.finish_reason ?? finishReason;
  }
  return { content, calls, finishReason };
}

function onlyCall(completion: ChatCompletion) {
  const calls = completion.choices[0]!.message.tool_calls ?? [];
  expect(calls).toHaveLength(1);
  const call = calls[0]!;
  if (call.type !== "function") throw new Error("expected a function call");
  return { name: call.function.name, args: JSON.parse(call.function.arguments) as Record<string, any> };
}

describe("expression finder", () => {
  it("finds the documented kinds of expressions and ignores plain numbers", () => {
    expect(findExpressions(MULTI_REQUEST)).toEqual(["17*23", "(120/8)+2^5"]);
    expect(findExpressions("What is sqrt(144)? Also 3.5 * (2 + 4).")).toEqual(["sqrt(144)", "3.5 * (2 + 4)"]);
    expect(findExpressions("Step 1. Read chapter 3 of 2024")).toEqual([]);
    expect(findExpressions("(see 17*23)")).toEqual(["17*23"]);
  });
});

describe("offline model server", () => {
  it("lists its model", async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual([MODEL]);
    expect(models.data[0]).toMatchObject({ object: "model", owned_by: "stepwise" });
  });

  it("routes several asks to plan_solve and a single ask to react", async () => {
    const several = onlyCall(await complete([system("router"), user(MULTI_REQUEST)], [chooseMode]));
    expect(several.name).toBe("choose_mode");
    expect(several.args.mode).toBe("plan_solve");
    expect(several.args.reason).toEqual(expect.any(String));

    const single = onlyCall(await complete([system("router"), user("What is sqrt(144)?")], [chooseMode]));
    expect(single.args.mode).toBe("react");
  });

  it("answers the router with text once the tool has replied", async () => {
    const first = await complete([system("router"), user("What is 2+2?")], [chooseMode]);
    const answer = await complete(
      [
        system("router"),
        user("What is 2+2?"),
        first.choices[0]!.message,
        { role: "tool", tool_call_id: first.choices[0]!.message.tool_calls![0]!.id, content: "ok" },
      ],
      [chooseMode],
    );
    expect(answer.choices[0]!.finish_reason).toBe("stop");
    expect(answer.choices[0]!.message.content).toBeTruthy();
    expect(answer.choices[0]!.message.tool_calls).toBeUndefined();
  });

  it("plans two steps whose first step holds the parallel calculations", async () => {
    const completion = await complete([plannerSystem(), user(`Request: ${MULTI_REQUEST}`)], [planning]);
    expect(completion.choices[0]!.finish_reason).toBe("tool_calls");
    const { name, args } = onlyCall(completion);
    expect(name).toBe("planning");
    expect(args.command).toBe("create");
    expect(args.title).toBe(`Plan for: ${MULTI_REQUEST.slice(0, 60)}`);
    expect(args.steps).toHaveLength(2);
    expect(args.steps[0].tasks).toEqual(["Evaluate 17*23 with the calculator", "Evaluate (120/8)+2^5 with the calculator"]);
    expect(args.steps[1].tasks).toEqual(["Write a report of the results to report.md with write_artifact"]);
    for (const step of args.steps) expect(step.done_when).toEqual(expect.any(String));
  });

  it("gives the first step two tasks even without two calculations", async () => {
    const { args } = onlyCall(await complete([plannerSystem(), user("Summarise the history of Rome")], [planning]));
    expect(args.steps[0].tasks.length).toBeGreaterThanOrEqual(2);
    expect(args.steps[0].tasks[0]).toBe("Measure the request text with text_stats");
  });

  it("acknowledges the plan, waits while steps remain, and finishes when all are completed", async () => {
    const created = await complete([plannerSystem(), user(MULTI_REQUEST)], [planning]);
    const createCall = created.choices[0]!.message;
    const history: ChatCompletionMessageParam[] = [
      system("planner"),
      user(MULTI_REQUEST),
      createCall,
      { role: "tool", tool_call_id: createCall.tool_calls![0]!.id, content: "Plan: ..." },
    ];
    const ack = await complete(history, [planning]);
    expect(ack.choices[0]!.message.content).toBe("Plan recorded.");

    const waiting = await complete([...history, user("Step 1 is completed.\n- 17*23 = 391")], [planning]);
    expect(waiting.choices[0]!.message.content).toBe("Proceeding with the next step.");
    expect(waiting.choices[0]!.message.tool_calls).toBeUndefined();

    const check = (index: number) =>
      `Check step ${index + 1} against its done_when (all done): call planning {"command": "check", "step_index": ${index}, "met": true or false, "reason": "…"}.`;
    const results = "Results of step 1 (Gather the facts):\n- [s1.t1] Evaluate 17*23 with the calculator: 17*23 = 391";
    const met = await complete([...history, user(`${results}\n\n${check(0)}`)], [planning]);
    expect(
      met.choices[0]!.message.tool_calls!.map((c) => JSON.parse((c as { function: { arguments: string } }).function.arguments)),
    ).toEqual([{ command: "check", step_index: 0, met: true, reason: "every task returned a result (1)" }]);
    // A write the user rejected is not redone, but the check says it was left undone.
    const refused = `${results}\n- [s1.t2] Write the report with write_artifact: Rejected by the user: no files today.`;
    const metWithout = await complete([...history, user(`${refused}\n\n${check(0)}`)], [planning]);
    expect(
      metWithout.choices[0]!.message.tool_calls!.map((c) => JSON.parse((c as { function: { arguments: string } }).function.arguments)),
    ).toEqual([
      {
        command: "check",
        step_index: 0,
        met: true,
        reason: "every task returned a result (2); 1 left undone: the user rejected its tool call",
      },
    ]);
    const last = await complete(
      [...history, user(`${results}\n\n${check(1)}\n\nAll steps are completed once this last step's check is met: then call finish.`)],
      [planning],
    );
    expect(
      last.choices[0]!.message.tool_calls!.map((c) => JSON.parse((c as { function: { arguments: string } }).function.arguments).command),
    ).toEqual(["check", "finish"]);
  });

  it("judges a step with a failed tool not met and revises it to the failed task, so the step runs again", () => {
    const shown = [
      "Current plan:",
      "Plan: p",
      "Steps:",
      "1. [in_progress] Gather the facts",
      '   - use calculator {"expression": "2+"}',
      "   - Evaluate 2+2 with the calculator",
      "   done when: every task has a result",
    ].join("\n");
    const text = [
      shown,
      "",
      "Results of step 1 (Gather the facts):",
      '- [s1.t1] use calculator {"expression": "2+"}: Done. The tool reported: Error: calculator failed. Not every tool call succeeded.',
      "- [s1.t2] Evaluate 2+2 with the calculator: 2+2 = 4",
      "",
      'Check step 1 against its done_when (every task has a result): call planning {"command": "check", "step_index": 0, "met": true or false, "reason": "…"}.',
    ].join("\n");
    const reply = respond({ messages: [system("planner"), user(text)], tools: [planning] });
    expect(reply.toolCalls.map((c) => c.arguments)).toEqual([
      { command: "check", step_index: 0, met: false, reason: expect.stringContaining("1 of 2 task(s) did not succeed") },
      {
        command: "update",
        steps: [
          {
            title: "Gather the facts",
            tasks: ['Explain why this could not be done: calculator {"expression": "2+"}'],
            done_when: "every task has a result",
          },
        ],
      },
    ]);
  });

  it("asks before planning when the request leaves a choice to the user and ask_user is offered, then plans with the answer", () => {
    const askUser = tool("ask_user", { question: { type: "string" } });
    const request = user("Request: Ask me which city to use, then compute 2+2");
    const asked = respond({ messages: [plannerSystem(), request], tools: [planning, askUser] });
    expect(asked.toolCalls).toEqual([
      expect.objectContaining({ name: "ask_user", arguments: { question: "Before I plan: which city to use?" } }),
    ]);
    const call = {
      role: "assistant" as const,
      content: null,
      tool_calls: [{ id: asked.toolCalls[0]!.id, type: "function", function: { name: "ask_user", arguments: "{}" } }],
    };
    const planned = respond({
      messages: [plannerSystem(), request, call, { role: "tool", tool_call_id: asked.toolCalls[0]!.id, content: "Paris" }],
      tools: [planning, askUser],
    });
    expect(planned.toolCalls[0]).toMatchObject({
      name: "planning",
      arguments: { command: "create", title: expect.stringContaining("(you said: Paris)") },
    });
    // Not offered: it plans at once.
    expect(respond({ messages: [plannerSystem(), request], tools: [planning] }).toolCalls[0]!.name).toBe("planning");
  });

  it("executes two calculations as parallel calls, identically streamed and not", async () => {
    const messages = [system("executor"), user("Your task: Evaluate 17*23 and 3.5 * (2 + 4) with the calculator")];
    const plain = await complete(messages, executorTools);
    const calls = plain.choices[0]!.message.tool_calls!;
    expect(calls.map((call) => call.type === "function" && JSON.parse(call.function.arguments))).toEqual([
      { expression: "17*23" },
      { expression: "3.5 * (2 + 4)" },
    ]);
    expect(new Set(calls.map((call) => call.id)).size).toBe(2);
    expect(calls[0]!.id).toMatch(/^call_[0-9a-f]+$/);

    const chunks = await streamChunks(messages, executorTools);
    const streamed = reassemble(chunks);
    expect(streamed.calls).toEqual(calls);
    expect(streamed.finishReason).toBe("tool_calls");
    const argumentDeltas = chunks.flatMap((chunk) => chunk.choices).flatMap((choice) => choice.delta.tool_calls ?? []);
    const firstCallDeltas = argumentDeltas.filter((part) => part.index === 0);
    expect(firstCallDeltas[0]).toMatchObject({ id: calls[0]!.id, type: "function", function: { arguments: "" } });
    expect(firstCallDeltas.filter((part) => part.function?.arguments).length).toBeGreaterThanOrEqual(2);

    // The client's own accumulator must agree too.
    const helper = await client.chat.completions.stream({ model: MODEL, messages, tools: executorTools }).finalChatCompletion();
    expect(helper.choices[0]!.message.tool_calls?.map((call) => call.type === "function" && call.function)).toEqual(
      calls.map((call) => call.type === "function" && call.function),
    );
  });

  it("writes the report from the result lines when the task asks for one", async () => {
    const task =
      "Your task: Write a report of the results to report.md with write_artifact\n\nResults so far:\n- 17*23 = 391\n- (120/8)+2^5 = 47";
    const { name, args } = onlyCall(await complete([user(task)], executorTools));
    expect(name).toBe("write_artifact");
    expect(args.filename).toBe("report.md");
    expect(args.content).toContain("- 17*23 = 391\n- (120/8)+2^5 = 47");
  });

  it("reports tool results and says plainly when a tool failed", async () => {
    const messages: ChatCompletionMessageParam[] = [
      user("Your task: Evaluate 1/0 and 2+2"),
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "calculator", arguments: '{"expression":"1/0"}' } },
          { id: "call_b", type: "function", function: { name: "calculator", arguments: '{"expression":"2+2"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: "Error: calculator failed: division by zero" },
      { role: "tool", tool_call_id: "call_b", content: "2+2 = 4" },
    ];
    const answer = (await complete(messages, executorTools)).choices[0]!.message.content!;
    expect(answer).toMatch(/^Done\. /);
    expect(answer).toContain("The tool reported: Error: calculator failed: division by zero");
    expect(answer).toContain("2+2 = 4");
  });

  it("asks first when told to, then does the rest of the task with the answer, then reports", async () => {
    const askUser = tool("ask_user", { question: { type: "string" } });
    const tools = [...executorTools, askUser];
    const request = user("Ask me which city to use, then compute 2+2");
    const first = (await complete([system("react"), request], tools)).choices[0]!.message;
    expect(first.tool_calls!.map((c: any) => c.function.name)).toEqual(["ask_user"]);
    const answered = [
      system("react"),
      request,
      first,
      { role: "tool", tool_call_id: first.tool_calls![0]!.id, content: "The user answered: Paris" },
    ] as ChatCompletionMessageParam[];
    const second = (await complete(answered, tools)).choices[0]!.message;
    expect(second.tool_calls!.map((c: any) => [c.function.name, JSON.parse(c.function.arguments)])).toContainEqual([
      "calculator",
      { expression: "2+2" },
    ]);
    const results = second.tool_calls!.map((c: any) => ({
      role: "tool",
      tool_call_id: c.id,
      content: c.function.name === "calculator" ? "2+2 = 4" : "8 words",
    }));
    const third = (await complete([...answered, second, ...results] as ChatCompletionMessageParam[], tools)).choices[0]!.message;
    expect(third.tool_calls ?? []).toEqual([]);
    expect(third.content).toContain("The user answered: Paris");
    expect(third.content).toContain("2+2 = 4");
  });

  it("plans only the tool calls a request names, with a report step only when it asks for one", () => {
    const calls = 'use everything__add {"a": 2, "b": 3} and use everything__echo {"message": "hi"}';
    const team = new Set(["calculator", "text_stats", "write_artifact", "everything__add", "everything__echo"]);
    const titles = (request: string) => (createPlan(request, team, []).steps as { title: string }[]).map((step) => step.title);
    expect(titles(calls)).toEqual(["Gather the facts"]);
    expect(titles(`${calls}, then write a short report`)).toEqual(["Gather the facts", "Write the report"]);
    expect(titles(MULTI_REQUEST)).toEqual(["Gather the facts", "Write the report"]);
  });

  it("runs a request's several Python blocks as parallel tasks of one step, each executor the block its task names", () => {
    const block = (name: string) => `\`\`\`python\nprint('${name}')\n\`\`\``;
    const input = `Run these two programs:\n${block("first")}\n${block("second")}`;
    // The planner's request is the message's first line; the blocks come from the whole message.
    const created = createPlan("Run these two programs:", new Set(["run_code"]), [], input);
    expect(created.steps).toEqual([
      {
        title: "Run the Python programs",
        tasks: ["Run the request's Python block 1 with run_code", "Run the request's Python block 2 with run_code"],
        done_when: "Each program has run.",
      },
    ]);
    const runCode = tool("run_code", { code: { type: "string" } });
    const second = respond({
      messages: [user(`Request: ${input}\n\nYour task: Run the request's Python block 2 with run_code`)],
      tools: [runCode],
    });
    expect(second.toolCalls.map((call) => call.arguments)).toEqual([{ code: "print('second')" }]);
  });

  it("mixes calculator and text_stats in one ReAct turn", async () => {
    const calls = respond({
      messages: [user("Compute 17*23 and tell me how many words this request has")],
      tools: executorTools,
    }).toolCalls;
    expect(calls.map((call) => call.name)).toEqual(["calculator", "text_stats"]);
  });

  it("only calls tools it was offered", async () => {
    const reply = respond({ messages: [user("Your task: Evaluate 2+2")], tools: [textStats] });
    expect(reply.toolCalls.map((call) => call.name)).toEqual(["text_stats"]);
  });

  it("summarizes in markdown citing every result line and the files they name, streamed in several pieces", async () => {
    const message = [
      `Request: ${MULTI_REQUEST}`,
      "Task results:",
      "- Evaluate 17*23 with the calculator: 17*23 = 391",
      "- Evaluate (120/8)+2^5 with the calculator: (120/8)+2^5 = 47",
      "- Write the report (files: report.md): Saved report.md",
      "Files: notes.txt, report.md, tool-output-x.txt",
    ].join("\n");
    const chunks = await streamChunks([system("summarizer"), user(message)]);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: "" });
    const textDeltas = chunks.flatMap((chunk) => chunk.choices).filter((choice) => choice.delta.content);
    expect(textDeltas.length).toBeGreaterThan(3);
    const { content, finishReason } = reassemble(chunks);
    expect(finishReason).toBe("stop");
    expect(content.split("\n")[0]).toBe(`Answer to: ${MULTI_REQUEST}`);
    expect(content).toContain("- Evaluate 17*23 with the calculator: 17*23 = 391");
    expect(content).toContain("- Evaluate (120/8)+2^5 with the calculator: (120/8)+2^5 = 47");
    // The files the answer relies on, not every file of the run.
    expect(content.split("\n").at(-1)).toBe("Files: report.md");
  });

  it("keeps each task result whole in the answer: the figures and tables under a result's first line", async () => {
    const table = "| column | sum | mean |\n|---|---|---|\n| amount | 450.00 | 90.00 |";
    const message = [
      "Request: Analyse the attached CSV",
      "",
      "Task results:",
      `- Analyse the attached CSV files in Python with run_code: Analysis done:\n### sales.csv: 5 rows\n\n${table}`,
      "",
      "Files: sales.csv",
    ].join("\n");
    const { content } = reassemble(await streamChunks([system("summarizer"), user(message)]));
    expect(content).toContain(
      `- Analyse the attached CSV files in Python with run_code: Analysis done:\n### sales.csv: 5 rows\n\n${table}\n`,
    );
    expect(content).toContain("Files: sales.csv");
  });

  it("answers identical requests identically", async () => {
    const messages = [system("executor"), user("Your task: Evaluate 17*23 and sqrt(144)")];
    const [first, second] = await Promise.all([complete(messages, executorTools), complete(messages, executorTools)]);
    expect(second.choices[0]!.message).toEqual(first.choices[0]!.message);
    expect(second.usage).toEqual(first.usage);
  });

  it("sends a usage chunk last when asked, with tokens estimated as chars/4", async () => {
    const messages = [user("How long is this sentence?")];
    const chunks = await streamChunks(messages, [textStats]);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    const promptChars = "How long is this sentence?".length;
    expect(last.usage).toMatchObject({ prompt_tokens: Math.ceil(promptChars / 4) });
    expect(last.usage!.completion_tokens).toBeGreaterThan(0);
    expect(last.usage!.total_tokens).toBe(last.usage!.prompt_tokens + last.usage!.completion_tokens);
    expect(chunks.slice(0, -1).every((chunk) => chunk.choices.length === 1)).toBe(true);
  });

  it("rejects bad requests and unknown paths with OpenAI's error shape", async () => {
    const badJson = await fetch(`${model.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(badJson.status).toBe(400);
    expect(await badJson.json()).toMatchObject({
      error: { type: "invalid_request_error", param: null, code: null, message: expect.any(String) },
    });

    const missing = await client.chat.completions
      .create({ model: MODEL } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(OpenAI.BadRequestError);
    expect((missing as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("messages");

    const unknown = await fetch(`${model.url}/nowhere`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { type: string } }).error.type).toBe("invalid_request_error");
  });

  it("waits latencyMs per completion, letting parallel callers overlap", async () => {
    // Served one after another, the answers would come 2 s apart; side by side, together. The
    // margin between the two (2 s) holds on a busy machine.
    const slow = await startOfflineModel({ latencyMs: 2_000 });
    try {
      const slowClient = new OpenAI({ baseURL: slow.url, apiKey: "offline", maxRetries: 0 });
      const started = Date.now();
      const answeredAt = await Promise.all(
        [1, 2, 3].map(async () => {
          await slowClient.chat.completions.create({ model: MODEL, messages: [user("hi")] });
          return Date.now();
        }),
      );
      expect(Math.min(...answeredAt) - started).toBeGreaterThanOrEqual(1_990);
      expect(Math.max(...answeredAt) - Math.min(...answeredAt)).toBeLessThan(2_000);
    } finally {
      await slow.close();
    }
  });
});

describe("the offline model knows only its request", () => {
  const ANALYSE = "Analyse the attached CSV and write an HTML report of the totals";
  const sales = { name: "sales.csv", contentType: "text/csv" };
  const firstStepTasks = (reply: ReturnType<typeof respond>) =>
    (reply.toolCalls[0]!.arguments as { steps: { tasks: string[] }[] }).steps[0]!.tasks;

  it("plans run_code over a file only when the planner's prompt offers run_code and names the file", () => {
    const offered = respond({
      messages: [plannerSystem(["run_code", "write_report"], [sales]), user(`Request: ${ANALYSE}`)],
      tools: [planning],
    });
    expect(firstStepTasks(offered)).toEqual(["Analyse sales.csv in Python with run_code"]);
    expect((offered.toolCalls[0]!.arguments as { steps: { tasks: string[] }[] }).steps[1]!.tasks[0]).toMatch(/write_report/);

    const noSandbox = respond({
      messages: [plannerSystem(["calculator", "text_stats"], [sales]), user(`Request: ${ANALYSE}`)],
      tools: [planning],
    });
    expect(JSON.stringify(noSandbox.toolCalls[0]!.arguments)).not.toMatch(/run_code|write_report|write_artifact/);

    const noFile = respond({ messages: [plannerSystem(["run_code", "write_report"]), user(`Request: ${ANALYSE}`)], tools: [planning] });
    expect(JSON.stringify(noFile.toolCalls[0]!.arguments)).not.toMatch(/run_code/);
  });

  it("plans calculator and text_stats tasks only for the tools the planner's prompt lists", () => {
    const withoutCalculator = firstStepTasks(
      respond({ messages: [plannerSystem(["text_stats"]), user(`Request: ${MULTI_REQUEST}`)], tools: [planning] }),
    );
    expect(withoutCalculator.join(" ")).not.toMatch(/calculator/);
    const nothing = respond({ messages: [plannerSystem([]), user(`Request: ${MULTI_REQUEST}`)], tools: [planning] });
    const steps = (nothing.toolCalls[0]!.arguments as { steps: { tasks: string[] }[] }).steps;
    expect(steps).toHaveLength(1);
    expect(JSON.stringify(steps)).not.toMatch(/calculator|text_stats|write_artifact/);
  });

  it("reads a file only when its name reached it", () => {
    const task = "Your task: Analyse the attached CSV files in Python with run_code";
    const runCode = tool("run_code", { code: { type: "string" } });
    const listed = respond({
      messages: [system("Files of this run (read_artifact reads them):\n- sales.csv (text/csv, 95 bytes, Uploaded)"), user(task)],
      tools: [runCode],
    });
    expect(listed.toolCalls[0]).toMatchObject({ name: "run_code", arguments: { files: ["sales.csv"] } });
    const unlisted = respond({ messages: [system("Files of this run: none."), user(task)], tools: [runCode] });
    expect(unlisted.toolCalls).toEqual([]);
    expect(unlisted.content).toMatch(/no CSV file/);
  });

  it.each([
    [
      "an .xls workbook",
      "Files of this run (read_artifact reads them):\n- sales.xls (application/vnd.ms-excel, 6656 bytes, Uploaded)",
      ["sales.xls"],
    ],
    [
      "an .xlsx workbook beside a CSV file",
      "Files of this run (read_artifact reads them):\n- sales.xlsx (application/vnd.openxmlformats-officedocument.spreadsheetml.sheet, 7323 bytes, Uploaded)\n- extra.csv (text/csv, 20 bytes, Uploaded)",
      ["sales.xlsx", "extra.csv"],
    ],
  ])("analyses %s in Python: each named table file is mounted", (_, listing, files) => {
    const runCode = tool("run_code", { code: { type: "string" } });
    const reply = respond({
      messages: [system(listing), user("Your task: Analyse the attached spreadsheet in Python with run_code")],
      tools: [runCode],
    });
    expect(reply.toolCalls[0]).toMatchObject({ name: "run_code", arguments: { files } });
  });

  it("researches a question asked in Chinese with deep_search, the question as asked", () => {
    const deepSearch = tool("deep_search", { question: { type: "string" } });
    const reply = respond({ messages: [user("请研究：2026年太阳能装机容量增长了多少？")], tools: [deepSearch] });
    expect(reply.toolCalls.map((c) => [c.name, c.arguments])).toEqual([["deep_search", { question: "2026年太阳能装机容量增长了多少？" }]]);
  });

  it("names in its answer about itself only the tools the router's prompt lists", () => {
    const routerSystem = system(
      "You are the router.\n\nTools of the executor agents:\n- calculator (read): math.\n- everything__add (read): adds.",
    );
    const reply = respond({ messages: [routerSystem, user("Hello, who are you?")], tools: [chooseMode] });
    expect(reply.toolCalls).toEqual([]);
    expect(reply.content).toContain("calculator, everything__add");
    expect(reply.content).not.toMatch(/text_stats|run_code/);
  });
});

describe("the offline model writes the code its runtime can run, reading run_code's description", () => {
  const runCodeSpec = (keepsState: boolean, libraries: readonly string[]): ChatCompletionTool => ({
    type: "function",
    function: {
      name: "run_code",
      description: runCodeDescription({ keepsState }, { timeoutMs: 30_000, memoryMb: 512, maxOutputChars: 1_000, libraries }),
      parameters: { type: "object", properties: { code: { type: "string" } } },
    },
  });
  const request = [
    system(reactPrompt({ files: [{ name: "sales.csv", contentType: "text/csv", bytes: 90, origin: "uploaded" }] })),
    user("Analyse the attached CSV"),
  ];
  const codeOf = (reply: ReturnType<typeof respond>) => (reply.toolCalls[0]!.arguments as { code: string }).code;

  it("with pandas, numpy and matplotlib: loads the frame with pandas, then plots the frame it kept to output/chart.png", () => {
    const tools = [runCodeSpec(true, ["pandas", "numpy", "matplotlib"])];
    const first = respond({ messages: request, tools });
    expect(codeOf(first)).toContain("import pandas as pd");
    expect(codeOf(first)).toContain('df = pd.read_csv("files/sales.csv")');
    const call = {
      id: "call_1",
      type: "function" as const,
      function: { name: "run_code", arguments: JSON.stringify(first.toolCalls[0]!.arguments) },
    };
    const second = respond({
      messages: [
        ...request,
        { role: "assistant", content: null, tool_calls: [call] },
        { role: "tool", tool_call_id: "call_1", content: "stdout:\n5 rows, 3 columns" },
      ],
      tools,
    });
    expect(codeOf(second)).not.toContain("read_csv");
    expect(codeOf(second)).toContain("df.groupby(key)[value].sum()");
    expect(codeOf(second)).toContain('plt.savefig("output/chart.png")');
  });

  it("with the standard library only: the analysis in csv and statistics, no pandas", () => {
    const first = respond({ messages: request, tools: [runCodeSpec(false, [])] });
    expect(runCodeDescription({ keepsState: false }, { timeoutMs: 1, memoryMb: 1, maxOutputChars: 1 })).toMatch(/standard library only/);
    expect(codeOf(first)).toMatch(/^import csv, glob, statistics/);
    expect(codeOf(first)).not.toMatch(/pandas|matplotlib/);
  });
});
