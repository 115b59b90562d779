import { describe, expect, it } from "vitest";
import { agentClients } from "../../../../functions/toolClients.js";
import { stepwiseTools } from "../../../../functions/workTools.js";
import { respond } from "../../../../infra/offlineModel/brain.js";
import { findToolDirectives } from "../../../../infra/offlineModel/directives.js";
import { rejectionReason, reviseSteps, shownSteps } from "../../../../infra/offlineModel/planRevision.js";
import { budgetDelivery } from "../../../../shared/agent/loop.js";
import { plannerPrompt } from "../../../../shared/agent/prompts.js";
import { settingsFromEnv } from "../../../../shared/settings.js";
import { defaultPersona, personaOf } from "../../../../shared/tools/persona.js";

const tool = (name: string) => ({ type: "function", function: { name, parameters: { type: "object", properties: {} } } });

describe("use <tool> {json arguments}", () => {
  it("finds each directive with its arguments, braces inside strings included", () => {
    expect(findToolDirectives('use everything__add {"a": 2, "b": 3} and use echo {"message": "a } b"} then use ping')).toEqual([
      { name: "everything__add", arguments: { a: 2, b: 3 }, text: 'use everything__add {"a": 2, "b": 3}' },
      { name: "echo", arguments: { message: "a } b" }, text: 'use echo {"message": "a } b"}' },
      { name: "ping", arguments: {}, text: "use ping" },
    ]);
    expect(findToolDirectives('use broken {"a": ')).toEqual([{ name: "broken", arguments: {}, text: "use broken" }]);
    expect(findToolDirectives('use list {"not": json}')).toEqual([]);
  });

  it("an executor calls any offered tool a directive names, and only offered ones", () => {
    const reply = respond({
      messages: [{ role: "user", content: 'Your task: use web__fetch {"url": "https://example.com"}' }],
      tools: [tool("web__fetch"), tool("calculator")],
    });
    expect(reply.toolCalls.map((c) => [c.name, c.arguments])).toEqual([["web__fetch", { url: "https://example.com" }]]);
    const notOffered = respond({ messages: [{ role: "user", content: "use run_code {}" }], tools: [tool("text_stats")] });
    expect(notOffered.toolCalls.map((c) => c.name)).toEqual(["text_stats"]);
  });

  /** Arguments for each tool an agent may be given, with values unlike any the offline model would pick itself. */
  const namedArguments: Record<string, Record<string, unknown>> = {
    calculator: { expression: "19*3" },
    text_stats: { text: "tide tables of the north sea" },
    write_artifact: { filename: "tides.md", content: "# Tides\n\nLow at 06:10.", description: "Tide notes" },
    read_artifact: { filename: "tides.pdf", offset: 200 },
    ask_user: { question: "Which harbour?" },
    run_code: { code: "print(sum(range(10)))" },
    web_fetch: { url: "https://example.com/tides" },
    web_search: { query: "north sea tides", limit: 3 },
    deep_search: { question: "How high are spring tides in Hamburg?", queries: ["Hamburg spring tide height"] },
    write_report: { title: "Tide summary", format: "markdown", content: "Low at 06:10; high at 12:25." },
    chart: { title: "Tide height", data: "tides.csv", spec: { mark: "line" } },
  };
  // Every tool Stepwise gives its agents, as the stack builds them (a new built-in without a case fails here).
  const builtins = stepwiseTools(settingsFromEnv({ TABLE_NAME: "t", WEB_SEARCH_PROVIDER: "files" }), agentClients("us-east-1"));
  const offered = builtins.map((t) => tool(t.name));
  // Words that, without a directive, start the offline model's own moves: an analysis, research, a summary, a report.
  const distraction = "Analyse the attached data, research it, summarize tides.pdf and write an HTML report";

  it("names a case for every built-in tool", () => {
    expect(builtins.map((t) => t.name).sort()).toEqual(Object.keys(namedArguments).sort());
  });

  it.each(Object.entries(namedArguments))("calls exactly the %s call a request names, then answers with its result", (name, args) => {
    const directive = `use ${name} ${JSON.stringify(args)}`;
    for (const text of [`Your task: ${distraction}: ${directive}`, `${distraction}: ${directive}`]) {
      const files = {
        role: "system",
        content: "Files of this run:\n- data.csv (text/csv, 10 bytes, Uploaded)\n- tides.pdf (application/pdf, 10 bytes, Uploaded)",
      };
      const messages: Array<Record<string, unknown>> = [files, { role: "user", content: text }];
      const first = respond({ messages: messages as never, tools: offered });
      expect(first.toolCalls.map((c) => [c.name, c.arguments])).toEqual([[name, args]]);
      const call = first.toolCalls[0]!;
      const answered = respond({
        messages: [
          ...messages,
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: call.id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
          },
          { role: "tool", tool_call_id: call.id, content: `result of ${name}` },
        ] as never,
        tools: offered,
      });
      expect(answered.toolCalls).toEqual([]);
      expect(answered.content).toContain(`result of ${name}`);
    }
  });

  it("plans named calls as written, whatever else the request's words would plan", () => {
    const team = plannerPrompt({ tools: builtins.map((t) => ({ name: t.name, description: t.name, access: t.access })) });
    const directive = `use write_report ${JSON.stringify(namedArguments.write_report)}`;
    const reply = respond({
      messages: [
        { role: "system", content: team },
        { role: "user", content: `Request: Research tides and analyse the data: ${directive}` },
      ],
      tools: [tool("planning")],
    });
    const plan = reply.toolCalls[0]!.arguments as { steps: { tasks: string[] }[] };
    expect(plan.steps.map((step) => step.tasks)).toEqual([[directive]]);
  });

  it("the planner makes each directive a task of the first step, so they run in parallel", () => {
    const team = plannerPrompt({ tools: ["a__x", "b__y"].map((name) => ({ name, description: name, access: "read" as const })) });
    const reply = respond({
      messages: [
        { role: "system", content: team },
        { role: "user", content: 'Request: use a__x {"n": 1} and use b__y {}' },
      ],
      tools: [tool("planning")],
    });
    const plan = reply.toolCalls[0]!.arguments as { steps: { tasks: string[] }[] };
    expect(plan.steps[0]!.tasks).toEqual(['use a__x {"n": 1}', "use b__y {}"]);
  });
});

describe("a catalogue larger than a request carries", () => {
  const ask = 'Your task: use bulk__tool_140 {"celsius": 100}';
  const search = { id: "s1", type: "function", function: { name: "find_tools", arguments: '{"query":"bulk__tool_140","limit":1}' } };

  it("an executor searches for a named tool that is not offered, then calls it once find_tools loaded it", () => {
    const first = respond({ messages: [{ role: "user", content: ask }], tools: [tool("calculator"), tool("find_tools")] });
    expect(first.toolCalls.map((c) => [c.name, c.arguments])).toEqual([["find_tools", { query: "bulk__tool_140", limit: 1 }]]);
    const found = [
      { role: "user", content: ask },
      { role: "assistant", content: null, tool_calls: [search] },
      { role: "tool", tool_call_id: "s1", content: 'Loaded 1 tools for "bulk__tool_140"; call them from your next reply:' },
    ];
    const second = respond({ messages: found, tools: [tool("calculator"), tool("bulk__tool_140"), tool("find_tools")] });
    expect(second.toolCalls.map((c) => [c.name, c.arguments])).toEqual([["bulk__tool_140", { celsius: 100 }]]);
    // Not found: it says so instead of searching again.
    const missing = respond({ messages: found, tools: [tool("calculator"), tool("find_tools")] });
    expect(missing.toolCalls.map((c) => c.name)).not.toContain("find_tools");
  });

  it("reports the called tool's result, not the search's list", () => {
    const reply = respond({
      messages: [
        { role: "user", content: ask },
        { role: "assistant", content: null, tool_calls: [search] },
        { role: "tool", tool_call_id: "s1", content: "Loaded 1 tools" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "bulk__tool_140", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "c1", content: "100 °C is 212 °F" },
      ],
      tools: [tool("bulk__tool_140"), tool("find_tools")],
    });
    expect(reply.content).toBe("Done. 100 °C is 212 °F");
  });
});

describe("the delivery at the round budget", () => {
  it("says, without tools, what the agent did and what it did not", () => {
    const reply = respond({
      messages: [
        { role: "user", content: "Count to ten with the calculator" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "calculator", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "c1", content: "1+1 = 2" },
        { role: "user", content: budgetDelivery(1) },
      ],
    });
    expect(reply.toolCalls).toEqual([]);
    expect(reply.content).toBe(
      "I ran out of rounds before I finished.\n\nWhat I did:\n- 1+1 = 2\n\nWhat is not done: the rest of the task (Count to ten with the calculator).",
    );
  });
});

describe("plan revision after a rejection", () => {
  const shown = [
    "Plan: p",
    "Steps:",
    "1. [not_started] Gather the facts",
    "   - Evaluate 1+1 with the calculator",
    "   - Measure the request text with text_stats",
    "   done when: all done",
    "2. [not_started] Write the report",
    "   - Write a report of the results to report.md with write_artifact",
  ].join("\n");

  it("reads the reason and the shown steps", () => {
    expect(rejectionReason("The user rejected this plan: no report. please. Revise it with the planning tool.")).toBe("no report. please");
    expect(rejectionReason("The user rejected this plan. Revise it with the planning tool.")).toBe("");
    expect(rejectionReason("Revise the plan if the results call for it")).toBeUndefined();
    expect(shownSteps(shown).map((s) => [s.title, s.tasks.length, s.done_when])).toEqual([
      ["Gather the facts", 2, "all done"],
      ["Write the report", 1, undefined],
    ]);
  });

  it("drops the step the reason names, else the task, else adds a step for the reason", () => {
    const steps = shownSteps(shown);
    expect(reviseSteps(steps, "No reports please").steps.map((s) => s.title)).toEqual(["Gather the facts"]);
    const noStats = reviseSteps(steps, "skip text_stats");
    expect(noStats.steps[0]!.tasks).toEqual(["Evaluate 1+1 with the calculator"]);
    expect(noStats.steps).toHaveLength(2);
    const added = reviseSteps(steps, "Add more detail");
    expect(added.steps.map((s) => s.title)).toEqual(["Gather the facts", "Write the report", "Address the feedback: Add more detail"]);
  });
});

describe("personas", () => {
  it("takes the model's job title (at most 6 words), else one derived from the tool", () => {
    expect(personaOf({ persona: "  Senior   data analyst " }, undefined, "calculator")).toBe("Senior data analyst");
    expect(personaOf({ persona: "one two three four five six seven" }, undefined, "calculator")).toBe("one two three four five six");
    expect(personaOf({}, undefined, "text_stats")).toBe("Text stats specialist");
    expect(personaOf({ persona: "" }, undefined, "crm__createLead")).toBe("Create lead specialist");
    expect(defaultPersona("everything__add")).toBe("Add specialist");
  });
});

describe("images a tool returned, shown to a model that sees images", () => {
  /** A 3×2 PNG header is all image-size reads. */
  const png = () => {
    const bytes = Buffer.alloc(33);
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(bytes, 0);
    bytes.writeUInt32BE(13, 8);
    bytes.write("IHDR", 12, "ascii");
    bytes.writeUInt32BE(3, 16);
    bytes.writeUInt32BE(2, 20);
    return bytes;
  };

  it("are part of the round's results, not a new task: the executor reports the results and describes each image", () => {
    const image = png();
    const reply = respond({
      messages: [
        { role: "user", content: "Your task: use web__screenshot {}" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "web__screenshot", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "c1", content: "[Image saved as file shot.png (image/png, 33 bytes)]" },
        {
          role: "user",
          content: [
            {
              type: "text",
              text: "Images the tool calls above returned, shown to you: shot.png.\nNot shown: big.png has 9000 bytes; a model sees images of at most 1000 bytes.",
            },
            { type: "image_url", image_url: { url: `data:image/png;base64,${image.toString("base64")}` } },
          ],
        },
      ],
      tools: [tool("web__screenshot")],
    });
    expect(reply.toolCalls).toEqual([]);
    expect(reply.content).toBe(
      [
        "Done. [Image saved as file shot.png (image/png, 33 bytes)]",
        "I see shot.png: image/png, 3×2 pixels, 33 bytes.",
        "Not shown: big.png has 9000 bytes; a model sees images of at most 1000 bytes.",
      ].join("\n"),
    );
  });
});
