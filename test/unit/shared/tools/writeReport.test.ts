import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { foldRunEvents } from "../../../../shared/apiClient/runFold.js";
import type { RunEvent, ToolProgress } from "../../../../shared/contracts/events.js";
import type { GuardrailCheck } from "../../../../shared/contracts/guardrails.js";
import { TextGuard } from "../../../../shared/guardrails/textGuard.js";
import type { ChatModel, ChatRequest } from "../../../../shared/llm/types.js";
import { fileText } from "../../../../shared/ports/files.js";
import { MemoryEvents } from "../../../../shared/testing/memoryEvents.js";
import { MemoryFileStore } from "../../../../shared/testing/memoryFiles.js";
import { testToolContext } from "../../../../shared/testing/toolContext.js";
import { writeReport } from "../../../../shared/tools/writeReport.js";
import { salesWorkbook } from "../../../support/documents.js";

describe("write_report", () => {
  it("renders HTML from Markdown: headings, tables, numbered sources, inline CSS, no scripts", async () => {
    const files = new MemoryFileStore();
    const content = [
      "## Totals",
      "| region | total |",
      "|---|---|",
      "| north | 220 |",
      "",
      "A [click](javascript:alert(1)) link. 2*3*4 = 24, *checked*.",
      "",
      "<script>alert('x')</script>",
      '<img src="x" onerror="alert(1)">',
      '<iframe src="https://evil.example"></iframe>',
      "<SCRIPT SRC=https://evil.example/x.js></SCRIPT>",
    ].join("\n");
    const output = await writeReport.run(
      {
        title: "Sales <2026>",
        format: "html",
        content,
        sources: [{ url: "https://example.com/a", title: "Source A" }, { url: "https://example.com/b" }],
      },
      testToolContext({ files }),
    );
    expect(output).toBe(`Saved the report sales-2026.html (${(await files.get("run_test", "sales-2026.html"))!.bytes} bytes, text/html).`);
    const html = fileText((await files.get("run_test", "sales-2026.html"))!);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/onerror|href="javascript:|<iframe/i);
    expect(html).toContain("<title>Sales &#60;2026&#62;</title>");
    expect(html).toMatch(/<h2[^>]*>Totals<\/h2>/);
    expect(html).toMatch(/<td>north<\/td>\s*<td>220<\/td>/);
    // Arithmetic as written, as in the console and the decks; emphasis still emphasis.
    expect(html).toContain("2*3*4 = 24, <em>checked</em>.");
    expect(html).toContain(
      '<ol class="sources"><li><a href="https://example.com/a" rel="noopener noreferrer">Source A</a></li><li><a href="https://example.com/b"',
    );
    expect(html).toMatch(/<style>[^<]+<\/style>/);
    expect(html).toContain("default-src 'none'");
    expect(html).not.toMatch(/<link|src="http/i);
  });

  it("stores Markdown as written, with a title and numbered sources", async () => {
    const files = new MemoryFileStore();
    await writeReport.run(
      { title: "Notes", format: "markdown", content: "Body text.", sources: [{ url: "https://example.com/a", title: "A" }] },
      testToolContext({ files }),
    );
    const file = (await files.get("run_test", "notes.md"))!;
    expect(file.contentType).toBe("text/markdown");
    expect(fileText(file)).toBe("# Notes\n\nBody text.\n\n## Sources\n\n1. [A](https://example.com/a)\n");
  });
});

describe("write_report written live", () => {
  /** A model that streams its report in pieces, a little apart, and keeps what it was asked. */
  function streamingModel(pieces: string[]) {
    const asked: ChatRequest[] = [];
    const model: ChatModel = {
      name: "writer",
      async complete(request) {
        asked.push(request);
        for (const piece of pieces) {
          request.onText?.(piece);
          await delay(5);
        }
        return { content: pieces.join(""), toolCalls: [], finishReason: "stop", usage: { promptTokens: 1, completionTokens: 1 } };
      },
    };
    return { model, asked };
  }

  it("streams the report as report.delta events of its file, then saves it (announced after the last delta)", async () => {
    const files = new MemoryFileStore();
    await files.put("run_test", "sales.xlsx", await salesWorkbook());
    const seen: string[] = [];
    const watched = Object.assign(Object.create(files) as MemoryFileStore, {
      put: (...args: Parameters<MemoryFileStore["put"]>) => {
        seen.push(`file ${args[1]}`);
        return files.put(...args);
      },
    });
    const deltas: string[] = [];
    const pieces = ["## Summary\n\nNorth ", "leads with 220.\n\n", "## Figures\n\n| region | total |\n|---|---|\n| north | 220 |\n"];
    const { model, asked } = streamingModel(pieces);
    const progress = (event: ToolProgress) => {
      if (event.type !== "report.delta") return;
      expect(event.data).toMatchObject({ name: "sales-review.html", format: "html" });
      deltas.push(event.data.text);
      seen.push("delta");
    };
    const output = await writeReport.run(
      writeReport.parameters.parse({
        title: "Sales review",
        task: "Review sales by region",
        material: ["sales.xlsx"],
        notes: "north 220, south 180",
      }),
      testToolContext({ files: watched, model, progress }),
    );
    expect(output).toMatch(/^Saved the report sales-review\.html/);
    expect(deltas.join("")).toBe(pieces.join(""));
    expect(seen.at(-1)).toBe("file sales-review.html");
    expect(seen.filter((s) => s === "delta").length).toBeGreaterThan(0);
    // The writer read the task, the notes and the workbook as Markdown.
    const request = String(asked[0]!.messages.at(-1)!.content);
    expect(request).toContain("Task: Review sales by region");
    expect(request).toContain("Notes:\nnorth 220, south 180");
    expect(request).toContain("Material: sales.xlsx\n## Sheet: Sales\n\n| region | month | amount |");
    const html = fileText((await files.get("run_test", "sales-review.html"))!);
    expect(html).toMatch(/<td>north<\/td>\s*<td>220<\/td>/);
  });

  it("a writer's reply that broke off is withdrawn before the retry streams: the folded report is the retried text alone", async () => {
    const files = new MemoryFileStore();
    await files.put("run_test", "sales.xlsx", await salesWorkbook());
    let attempt = 0;
    const model: ChatModel = {
      name: "writer",
      async complete(request) {
        // The first reply streams a piece and breaks off; the model port retries the call (as withRetries does).
        request.onText?.("## Summary\n\nNorth le");
        await delay(400);
        request.onRetry?.({ attempt: ++attempt, retries: 3, reason: "the stream was cut", waitMs: 0 });
        request.onText?.("## Summary\n\nNorth leads with 220.\n");
        return {
          content: "## Summary\n\nNorth leads with 220.\n",
          toolCalls: [],
          finishReason: "stop",
          usage: { promptTokens: 1, completionTokens: 1 },
        };
      },
    };
    const events: RunEvent[] = [];
    const progress = (event: ToolProgress) =>
      events.push({
        ...event,
        data: { ...event.data, agent: "executor", taskId: "t1", callId: "c1" },
        seq: events.length + 1,
        at: "",
      } as RunEvent);
    await writeReport.run(
      writeReport.parameters.parse({ title: "Sales", format: "markdown", task: "Review sales", material: ["sales.xlsx"] }),
      testToolContext({ files, model, progress }),
    );
    expect(events.map((e) => e.type)).toEqual(["report.delta", "report.withdrawn", "report.delta"]);
    expect(events[1]!.data).toMatchObject({ name: "sales.md", reason: "the stream was cut" });
    expect(foldRunEvents(events).calls.get("c1")?.reports).toEqual({
      "sales.md": { format: "markdown", text: "## Summary\n\nNorth leads with 220.\n" },
    });
  });

  it.each([
    [{ title: "T" }, /give either content \(the finished report\) or task/],
    [{ title: "T", task: "Review", material: ["missing.csv"] }, /no file named missing\.csv to write from/],
  ])("%j is a clear error and writes nothing", async (args, message) => {
    const files = new MemoryFileStore();
    const { model, asked } = streamingModel(["x"]);
    await expect(writeReport.run(writeReport.parameters.parse(args), testToolContext({ files, model }))).rejects.toThrow(message);
    expect(files.writes).toEqual([]);
    expect(asked).toEqual([]);
  });

  it("with output guardrails, an address split across two deltas reaches no report.delta and no saved report; the redacted text does", async () => {
    const files = new MemoryFileStore();
    await files.put("run_test", "sales.xlsx", await salesWorkbook());
    const events = new MemoryEvents();
    const pii: GuardrailCheck[] = [{ kind: "pii", action: "redact", entities: ["email"], on: ["output"] }];
    const usage = { promptTokens: 0, completionTokens: 0, llmCalls: 0 };
    const { model } = streamingModel(["## Contact\n\nWrite to ann.lee", "@example.com for the figures.\n"]);
    const output = new TextGuard({ events, model }, "run_test", pii, { agent: "executor", taskId: "t1" }, usage);
    const deltas: string[] = [];
    const progress = (event: ToolProgress) => {
      if (event.type === "report.delta") deltas.push(event.data.text);
    };
    await writeReport.run(
      writeReport.parameters.parse({ title: "Contact", format: "markdown", task: "Say whom to ask", material: ["sales.xlsx"] }),
      { ...testToolContext({ files, model, progress }), output },
    );
    const saved = fileText((await files.get("run_test", "contact.md"))!);
    expect(deltas.join("")).toBe("## Contact\n\nWrite to [redacted email] for the figures.\n");
    expect(saved).toContain("Write to [redacted email] for the figures.");
    expect(saved).not.toContain("ann.lee");
    expect((await events.list("run_test")).map((e) => [e.type, (e.data as { verdict?: string }).verdict])).toEqual([
      ["guardrail.decided", "redact"],
      ["guardrail.decided", "redact"],
    ]);
  });

  it("finished text still works without a model", async () => {
    const files = new MemoryFileStore();
    await writeReport.run(
      writeReport.parameters.parse({ title: "Done", format: "markdown", content: "All done." }),
      testToolContext({ files }),
    );
    expect(fileText((await files.get("run_test", "done.md"))!)).toBe("# Done\n\nAll done.\n");
  });
});
