import { endedBlocks, type FoldedRun, openBlock, type StreamedBlock, type TextSource } from "../../../../shared/apiClient/runFold.js";
import type { RunEvent } from "../../../../shared/contracts/events.js";
import { undoneText } from "../../../../shared/contracts/undone.js";
import { evaluationText } from "../../../display/evaluation.js";
import { argumentViews } from "../../../display/toolArguments.js";
import { h } from "../dom.js";
import { highlightHtml } from "../highlight.js";
import { safeHtml } from "../markdown.js";
import { argumentBody } from "./approvals.js";

type Of<T extends RunEvent["type"]> = Extract<RunEvent, { type: T }>;

/**
 * The run page's Activity list and Event log: what each event adds to them. The run's state comes
 * from the fold (runFold.ts): each event is shown knowing the fold before and after it. Here live
 * only the elements that show it: a text block's, a tool call's, a report's.
 */
export class Activity {
  /** Each open text block's element, by the block's first event. */
  private readonly blocks = new Map<number, HTMLElement>();
  /** Each tool call's entry, by call id: run_code's code replaces its arguments there. */
  private readonly calls = new Map<string, HTMLElement>();
  /** A run_code call's code block, by call id: its output goes beneath it. */
  private readonly codeBlocks = new Map<string, HTMLElement>();
  /** Reports being written, by call and file name. */
  private readonly reports = new Map<string, HTMLElement>();

  constructor(
    private readonly list: HTMLElement,
    private readonly log: HTMLElement,
    /** A tool result's "Fork from here" (ended runs only), if it offers one. */
    private readonly forkButton: (result: Of<"tool.result">["data"]) => HTMLElement | null = () => null,
  ) {}

  /** The event's line in the event log and its entry in the activity. */
  show(event: RunEvent, before: FoldedRun, after: FoldedRun) {
    const logLine = h("li", { dataset: { seq: String(event.seq), type: event.type } }, `${event.seq} ${event.type}`);
    this.log.append(logLine);
    const ended = endedBlocks(before, after);
    if (event.type === "agent.withdrawn") this.withdraw(event.data, ended, logLine);
    else if (event.type === "agent.delta" || event.type === "agent.reasoning" || event.type === "agent.thought")
      this.text(event, ended, after);
    else if (!this.toolEntry(event, after)) this.runEntry(event);
    for (const block of ended) this.blocks.delete(block.startSeq);
  }

  private add(event: RunEvent, ...children: (Node | string | null)[]) {
    const item = h(
      "li",
      { class: `entry ${event.type.replace(".", "-")}`, dataset: { seq: String(event.seq), type: event.type } },
      ...children,
    );
    this.list.append(item);
    return item;
  }

  /** Streamed text as it grows, reasoning collapsed; a thought only when no delta carried its text. */
  private text(event: Of<"agent.delta" | "agent.reasoning" | "agent.thought">, ended: StreamedBlock[], after: FoldedRun) {
    const d = event.data;
    if (event.type === "agent.thought") {
      // The same text as the deltas before it, when the model streamed: shown once.
      if (!ended.some((block) => block.kind === "text")) this.add(event, who(d), prose(h("div", { class: "text prose" }), d.text));
      return;
    }
    const block = openBlock(after, event.type === "agent.delta" ? "text" : "reasoning", d);
    if (!block) return; // an empty piece
    let element = this.blocks.get(block.startSeq);
    if (event.type === "agent.delta") {
      element ??= this.opened(block, this.add(event, who(d), h("div", { class: "text prose" })).lastElementChild as HTMLElement);
      prose(element, block.text);
      return;
    }
    // Shown collapsed: what the model thought, for whoever wants to read it.
    element ??= this.opened(
      block,
      this.add(event, who(d), h("details", { class: "reasoning" }, h("summary", {}), h("pre", { class: "reasoning" }))),
    );
    const [summary, text] = element.querySelectorAll("summary, pre");
    summary.textContent = `Reasoning (${block.text.length} characters)`;
    text.textContent = block.text;
  }

  private opened(block: StreamedBlock, element: HTMLElement) {
    this.blocks.set(block.startSeq, element);
    return element;
  }

  /** A reply that broke off and is retried: its text and reasoning leave the page; the event log marks them. */
  private withdraw(source: TextSource, ended: StreamedBlock[], logLine: HTMLElement) {
    for (const block of ended) (this.blocks.get(block.startSeq)?.closest("li.entry") as HTMLElement | null)?.remove();
    const seqs = ended.flatMap((block) => block.seqs);
    for (const seq of seqs) this.log.querySelector(`li[data-seq="${seq}"]`)?.classList.add("withdrawn");
    logLine.append(
      ` (${seqs.length} event${seqs.length === 1 ? "" : "s"} of ${source.agent}${source.taskId ? ` ${source.taskId}` : ""} withdrawn)`,
    );
  }

  /** A tool call, what it reports as it runs, and its result; false for an event of another kind. */
  private toolEntry(event: RunEvent, after: FoldedRun): boolean {
    const { type, data: d } = event;
    switch (type) {
      case "tool.called":
        this.calls.set(d.callId, this.add(event, who(d), h("strong", {}, `→ ${d.tool}`), argumentsView(d.arguments)));
        return true;
      case "tool.result":
        this.add(
          event,
          who(d),
          h("strong", { class: d.ok ? "ok" : "bad" }, `${d.ok ? "✓" : "✗"} ${d.tool}`),
          h("pre", { class: "output" }, String(d.output).slice(0, 2000)),
          this.forkButton(d),
        );
        return true;
      case "code":
        this.code(event as Of<"code">, after);
        return true;
      case "report.delta": {
        // The report as it is written, rendered as it arrives; the saved file follows as file.created.
        const key = `${d.callId}:${d.name}`;
        let text = this.reports.get(key);
        if (!text) {
          text = h("div", { class: "text prose report" });
          this.add(event, who(d), h("strong", {}, `Writing ${d.name}`), text);
          this.reports.set(key, text);
        }
        prose(text, after.calls.get(d.callId)?.reports?.[d.name]?.text ?? "");
        return true;
      }
      case "report.withdrawn": {
        // The writer's reply broke off and is retried: its text so far leaves the page; the retry writes it anew.
        const key = `${d.callId}:${d.name}`;
        (this.reports.get(key)?.closest("li.entry") as HTMLElement | null)?.remove();
        this.reports.delete(key);
        this.add(event, who(d), h("strong", { class: "warn" }, `↺ ${d.name}: `), "the text so far is withdrawn; it is written again.");
        return true;
      }
      case "search.progress":
        this.add(event, who(d), h("strong", {}, `Search (${d.stage}): `), d.detail);
        return true;
      case "model.retrying":
        this.add(
          event,
          who(d),
          h("strong", { class: "warn" }, "↻ Model call failed: "),
          `${d.reason}. Retry ${d.attempt} of ${d.retries} in ${(d.waitMs / 1000).toFixed(1)} s.`,
        );
        return true;
      default:
        return false;
    }
  }

  /** run_code's code, highlighted below its call (whose arguments then leave it out), then its output beneath. */
  private code(event: Of<"code">, after: FoldedRun) {
    const d = event.data;
    if (d.part === "source") {
      this.calls
        .get(d.callId)
        ?.querySelector(".args")
        ?.replaceWith(argumentsView(after.calls.get(d.callId)?.arguments, d.text));
      const code = h("code", { class: `language-${d.language}` });
      const html = highlightHtml(d.text, d.language);
      if (html === undefined) code.textContent = d.text;
      else code.innerHTML = html; // highlight.js escapes every character of the code
      this.codeBlocks.set(d.callId, this.add(event, who(d), h("strong", {}, `Code (${d.language})`), h("pre", { class: "code" }, code)));
      return;
    }
    const output = h("pre", { class: `code-output ${d.ok === false ? "bad" : ""}`, dataset: { callId: d.callId } }, d.text);
    const block = this.codeBlocks.get(d.callId);
    if (block) block.append(h("strong", { class: d.ok === false ? "bad" : "ok" }, "Output"), output);
    else this.add(event, who(d), h("strong", {}, "Output"), output);
  }

  /** The run's own steps: tasks, pauses and decisions, files, tool sources, its start and end. */
  private runEntry(event: RunEvent) {
    const { type, data: d } = event;
    switch (type) {
      case "task.completed":
        this.add(
          event,
          h("span", { class: "who" }, d.taskId),
          // A task a person left undone is not shown as done: it ended without the call they declined.
          d.undone?.length
            ? h("span", {}, h("strong", { class: "undone" }, "⊘ not done:"), ` ${d.title} — ${undoneText(d.undone)}`)
            : `${d.status === "succeeded" ? "✓" : "✗"} ${d.title}`,
          d.files?.length ? h("small", { class: "muted" }, ` · files: ${d.files.join(", ")}`) : null,
        );
        break;
      case "interrupt.opened":
        // A tool call's arguments are shown readably on its card, not as the summary's JSON.
        this.add(
          event,
          h("strong", {}, "Waiting for you: "),
          d.kind === "tool_approval" && d.toolName ? `allow ${d.toolName}?` : d.summary.split("\n")[0],
        );
        break;
      case "interrupt.resolved":
        this.add(event, `Decided: ${d.decision}${d.message ? ` — ${d.message}` : ""}`);
        break;
      case "file.created":
        this.add(
          event,
          d.taskId ? h("span", { class: "who" }, d.taskId) : null,
          h("strong", {}, "File: "),
          `${d.name} `,
          h("small", { class: "muted" }, `${d.bytes} bytes`),
        );
        break;
      case "tool_source.unavailable":
        this.add(event, h("strong", { class: "bad" }, `Tool source ${d.source} unavailable: `), d.reason);
        break;
      case "run.started":
        this.add(event, `Started (${d.mode}).`);
        break;
      case "guardrail.decided":
        if (d.verdict !== "pass")
          this.add(
            event,
            h(
              "strong",
              { class: d.verdict === "block" || (d.verdict === "deny" && d.mode !== "log_only") ? "bad" : "" },
              `${d.kind === "policy" ? "Policy" : "Guardrail"} ${d.check}: ${d.verdict.replace("_", " ")} `,
            ),
            h("small", { class: "muted" }, `(${d.tool ? `${d.stage} of ${d.tool}` : d.stage}${d.mode === "log_only" ? ", log only" : ""})`),
            d.reason ? ` — ${d.reason}` : "",
          );
        break;
      case "task.started":
      case "plan.updated":
        break; // the timeline and the plan show them
      case "eval.scored": {
        const { headline, judges, passed } = evaluationText(d);
        this.add(
          event,
          h("strong", { class: passed === undefined ? "" : passed ? "ok" : "bad" }, headline),
          judges.length ? h("ul", { class: "judges" }, ...judges.map((line) => h("li", {}, line))) : null,
        );
        break;
      }
      default:
        if (type.startsWith("run."))
          this.add(
            event,
            h("strong", {}, type.replace("run.", "Run ").replace("_", " ")),
            "reason" in d && d.reason ? ` — ${d.reason}` : "",
          );
        else this.add(event, type);
    }
  }
}

const who = (data: { agent?: string; taskId?: string; persona?: string }) =>
  h("span", { class: "who" }, [data.agent, data.taskId, data.persona].filter(Boolean).join(" · "));

/** Agent text as Markdown (tables, lists, code), made safe. */
function prose(element: HTMLElement, text: string) {
  element.innerHTML = safeHtml(text).trim();
  return element;
}

/** A tool call's arguments, each as what it is (code highlighted, text wrapped, JSON pretty), but the one equal to `skip`. */
function argumentsView(args: unknown, skip?: string) {
  return h(
    "div",
    { class: "args" },
    argumentViews(args)
      .filter((view) => view.text !== skip)
      .map((view) => h("div", { class: "argument" }, h("h4", {}, view.name), argumentBody(view))),
  );
}
