import { ApiError } from "../../../../shared/apiClient/errors.js";
import { StreamedText, sourceKey, type TextSource, textSource } from "../../../../shared/apiClient/streamedText.js";
import type { RunEvent } from "../../../../shared/contracts/events.js";
import type { FileView, RunView } from "../../../../shared/contracts/responses.js";
import { TERMINAL_STATUSES } from "../../../../shared/contracts/terminal.js";
import { argumentViews } from "../../../display/toolArguments.js";
import { client, enc } from "../api.js";
import { announce, h, render, usd } from "../dom.js";
import { highlightHtml } from "../highlight.js";
import { safeHtml } from "../markdown.js";
import { approvalCard, argumentBody, type ToolInfo } from "./approvals.js";

const ended = (run: RunView | undefined) => run !== undefined && TERMINAL_STATUSES.has(run.status);

interface Lane {
  key: string;
  taskId: string;
  title: string;
  iteration: number;
  start: string;
  end?: string;
  status: string;
}

/** A run live: plan, task lanes, tool calls and text as they stream, approvals, answer, files, usage. */
export function runPage(app: HTMLElement, runId: string) {
  let view: RunView | undefined;
  let toolList: Promise<ToolInfo[]> | undefined;
  const tools = () => (toolList ??= client.listTools().then((r) => r.tools));
  const lanes = new Map<string, Lane>();
  let shownCards: string | undefined;
  let shownFiles: string | undefined;
  /** Text being streamed per agent, closed when that agent does something else. */
  const streamed = new StreamedText<HTMLElement>();
  /** A model's reasoning as it streams, per agent: one collapsed block until that agent moves on. */
  const reasoning = new StreamedText<{ element: HTMLElement; summary: HTMLElement }>();
  /** Each tool call's arguments and its entry, by call id. */
  const toolCalls = new Map<string, { args: unknown; shown: HTMLElement }>();
  /** A run_code call's code block, by call id: its output goes beneath it. */
  const codeBlocks = new Map<string, HTMLElement>();
  /** Reports being written, by call and file name: each delta adds to its text. */
  const openReports = new Map<string, { element: HTMLElement; text: string }>();
  /** Agent text as Markdown (tables, lists, code), made safe. */
  const prose = (element: HTMLElement, text: string) => {
    element.innerHTML = safeHtml(text).trim();
    return element;
  };

  const title = h("h1", {}, "Run");
  const meta = h("p", { class: "meta" });
  /** The task whole, when the title cuts it: opened on demand. */
  const taskText = h("p", { class: "task-text" });
  const wholeTask = h("details", { class: "whole-task", hidden: true }, h("summary", {}, "Show the whole task"), taskText);
  const connection = h("span", { class: "connection", role: "status" }, "connecting…");
  const cancel = h("button", { type: "button", class: "danger", hidden: true, onclick: () => cancelRun() }, "Cancel run");
  const waiting = h("section", { "aria-label": "Waiting for you", class: "waiting" });
  const plan = h("section", { "aria-labelledby": "plan-h", class: "plan-section" });
  const timeline = h("section", { "aria-labelledby": "timeline-h", class: "timeline-section" });
  const activity = h("ol", { class: "activity", "aria-label": "Activity" });
  const answer = h("section", { "aria-labelledby": "answer-h", class: "answer-section", hidden: true });
  const files = h("section", { "aria-labelledby": "files-h", class: "files-section", hidden: true });
  const usage = h("section", { "aria-labelledby": "usage-h", class: "usage-section" });
  const eventLog = h("ol", { id: "event-log", class: "event-log" });
  const error = h("p", { class: "error", role: "alert", hidden: true });

  render(
    app,
    h("div", { class: "row spread" }, title, h("div", { class: "row" }, connection, cancel)),
    wholeTask,
    meta,
    error,
    waiting,
    h(
      "div",
      { class: "grid" },
      h(
        "div",
        { class: "col" },
        plan,
        timeline,
        h("section", { "aria-labelledby": "activity-h", class: "activity-section" }, h("h2", { id: "activity-h" }, "Activity"), activity),
      ),
      h("div", { class: "col side" }, answer, files, usage),
    ),
    h("details", { class: "card" }, h("summary", {}, "Event log"), eventLog),
  );

  const showError = (err: unknown) => {
    error.textContent =
      err instanceof ApiError && err.status === 401 ? "Your API key is no longer accepted. Sign in again." : (err as Error).message;
    error.hidden = false;
  };

  async function refresh() {
    try {
      view = await client.getRun(runId);
    } catch (err) {
      showError(err);
      return;
    }
    error.hidden = true;
    const cut = view.input.length > 80 || view.input.includes("\n");
    title.textContent = cut ? `${view.input.split("\n")[0]!.slice(0, 79)}…` : view.input;
    taskText.textContent = view.input;
    wholeTask.hidden = !cut;
    document.title = `${title.textContent} · Stepwise`;
    render(
      meta,
      h("span", { class: `badge ${view.status}` }, view.status.replace("_", " ")),
      ` ${view.mode ?? view.requestedMode} · `,
      h("code", {}, view.runId),
      " · session ",
      h("a", { href: `#/runs?sessionId=${enc(view.sessionId)}` }, view.sessionId),
      view.status === "queued" && view.queuedBehind
        ? [" · waits for ", h("a", { href: `#/runs/${enc(view.queuedBehind)}` }, view.queuedBehind), " to end"]
        : null,
      view.statusDetail ? [" · ", h("span", { class: "status-detail" }, view.statusDetail)] : null,
      view.links.console
        ? [" · ", h("a", { href: view.links.console, target: "_blank", rel: "noopener" }, "Step Functions console")]
        : null,
      " · ",
      protocolLinks(view.runId, view.links.stream),
    );
    cancel.hidden = ended(view);
    // Cards and files are drawn again only when they change: a card being edited, or a preview
    // being read, stays as it is while the run goes on.
    const cards = view.pendingInterrupts.map((i) => i.interruptId).join(" ");
    if (cards !== shownCards) {
      shownCards = cards;
      render(
        waiting,
        view.pendingInterrupts.map((i) => approvalCard(runId, i, tools, () => void refresh())),
      );
    }
    drawPlan();
    drawAnswer();
    const fileNames = view.files.map((f) => `${f.name}:${f.bytes}:${f.taskId ?? ""}`).join(" ");
    if (fileNames !== shownFiles) {
      shownFiles = fileNames;
      drawFiles();
    }
    drawUsage();
    drawTimeline();
  }

  /** The run again soon, once however many events arrive meanwhile: usage goes up with each model call. */
  let refreshTimer: number | undefined;
  const refreshSoon = () => {
    refreshTimer ??= window.setTimeout(() => {
      refreshTimer = undefined;
      void refresh();
    }, 500);
  };

  function drawPlan() {
    const p = view?.plan;
    render(
      plan,
      h("h2", { id: "plan-h" }, "Plan"),
      !p
        ? h(
            "p",
            { class: "muted" },
            view?.mode === "plan_solve" || view?.requestedMode === "plan_solve"
              ? "Planning…"
              : "No plan: this run is handled by one agent.",
          )
        : h(
            "ol",
            { class: "plan" },
            p.steps.map((step) =>
              h(
                "li",
                { class: `step ${step.status}`, dataset: { status: step.status } },
                h("span", { class: `badge ${step.status}` }, step.status.replace("_", " ")),
                " ",
                step.title,
                h(
                  "ul",
                  {},
                  step.tasks.map((t) => h("li", {}, t)),
                ),
                step.verdict
                  ? h(
                      "p",
                      { class: `verdict ${step.verdict.met ? "met" : "not-met"}` },
                      `Done when ${step.verdict.met ? "met" : "not met — revised, runs again"}${step.verdict.reason ? `: ${step.verdict.reason}` : ""}`,
                    )
                  : null,
              ),
            ),
          ),
    );
  }

  function drawTimeline() {
    const all = [...lanes.values()];
    if (all.length === 0) {
      const oneAgent = view?.mode !== undefined && view.mode !== null && view.mode !== "plan_solve";
      return render(
        timeline,
        h("h2", { id: "timeline-h" }, "Tasks"),
        h(
          "p",
          { class: "muted" },
          oneAgent
            ? "No parallel tasks: one agent handles this run."
            : ended(view)
              ? "This run had no parallel tasks."
              : "No parallel tasks yet.",
        ),
      );
    }
    const now = new Date().toISOString();
    const t = (iso: string) => Date.parse(iso);
    const byStep = new Map<number, Lane[]>();
    for (const lane of all) byStep.set(lane.iteration, [...(byStep.get(lane.iteration) ?? []), lane]);
    render(
      timeline,
      h("h2", { id: "timeline-h" }, "Tasks"),
      [...byStep].map(([iteration, group]) => {
        // Each step on its own time axis, so overlap between its parallel tasks is visible.
        const min = Math.min(...group.map((l) => t(l.start)));
        const max = Math.max(...group.map((l) => t(l.end ?? now)), min + 1);
        const span = max - min;
        return [
          h("h3", { class: "step-h" }, `Step ${iteration + 1}`),
          h(
            "div",
            { class: "lanes", role: "list", "aria-label": `Step ${iteration + 1} tasks` },
            group.map((lane) => {
              const left = ((t(lane.start) - min) / span) * 100;
              const width = Math.max(((t(lane.end ?? now) - t(lane.start)) / span) * 100, 1);
              const took = seconds(t(lane.end ?? now) - t(lane.start));
              return h(
                "div",
                {
                  class: "lane",
                  role: "listitem",
                  dataset: { taskId: lane.taskId, start: lane.start, end: lane.end ?? "", status: lane.status },
                },
                h("span", { class: "lane-label", title: `${lane.taskId} ${lane.title}` }, `${lane.taskId} ${lane.title}`),
                h(
                  "span",
                  { class: "lane-track" },
                  h("span", {
                    class: `lane-bar ${lane.status}`,
                    style: { left: `${left.toFixed(2)}%`, width: `${Math.min(width, 100 - left).toFixed(2)}%` },
                    title: `${lane.start} → ${lane.end ?? "running"}`,
                  }),
                ),
                h("span", { class: "lane-duration" }, lane.end ? took : `${took}…`),
                h("span", { class: "visually-hidden" }, ` ${lane.status}`),
              );
            }),
            // The step's time axis: where each bar starts and ends, in seconds from the step's start.
            h(
              "div",
              { class: "lane axis", "aria-hidden": "true" },
              h("span"),
              h(
                "span",
                { class: "axis-track" },
                [0, 0.5, 1].map((at) => h("span", { class: "tick", style: { left: `${at * 100}%` } }, seconds(span * at))),
              ),
              h("span"),
            ),
          ),
        ];
      }),
    );
  }

  function seconds(ms: number) {
    return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
  }

  function drawAnswer() {
    if (!view || (!view.result && !view.error)) return;
    answer.hidden = false;
    render(
      answer,
      h("h2", { id: "answer-h" }, view.error ? "Error" : "Answer"),
      view.error ? h("p", { class: "error" }, view.error.message) : h("div", { class: "prose answer" }),
    );
    const prose = answer.querySelector(".answer");
    if (prose && view.result) prose.innerHTML = safeHtml(view.result);
  }

  function drawFiles() {
    if (!view || view.files.length === 0) return;
    files.hidden = false;
    const preview = h("div", { class: "prose preview", "aria-live": "polite" });
    const list = (shown: FileView[]) =>
      h(
        "ul",
        { class: "files" },
        shown.map((file) =>
          h(
            "li",
            {},
            h("span", {}, `${file.name} `, h("small", { class: "muted" }, `${file.bytes} bytes`)),
            h("button", { type: "button", onclick: () => download(file) }, `Download ${file.name}`),
            previewButton(file, preview),
          ),
        ),
      );
    // The run's own files (uploads, the answer) first, then each task's under its title.
    const ofRun = view.files.filter((f) => !f.taskId || !view?.tasks.some((t) => t.taskId === f.taskId));
    const byTask = view.tasks.flatMap((task) => {
      const own = view?.files.filter((f) => f.taskId === task.taskId) ?? [];
      return own.length ? [h("h3", { class: "file-task" }, h("span", { class: "who" }, task.taskId), ` ${task.title}`), list(own)] : [];
    });
    render(files, h("h2", { id: "files-h" }, "Files"), ofRun.length ? list(ofRun) : null, byTask, preview);
  }

  /** A button showing the file's preview in `into`, when it has one. */
  function previewButton(file: FileView, into: HTMLElement) {
    const shown = previewOf(file);
    if (!shown) return null;
    return h("button", { type: "button", class: "link", onclick: () => showPreview(shown, into) }, `Preview ${file.name}`);
  }

  /** What a file's preview shows: the file itself (Markdown, HTML, text), or a deck's slides as the web page saved beside it. */
  function previewOf(file: FileView): FileView | undefined {
    if (/markdown|html|text\/plain/.test(file.contentType)) return file;
    if (!/\.pptx$/.test(file.name)) return undefined;
    const slides = file.name.replace(/\.pptx$/, ".slides.html");
    return view?.files.find((f) => f.name === slides);
  }

  async function fileBlob(file: FileView): Promise<Blob> {
    // The API gives a short-lived link to the bytes (in S3, another origin); the link needs no key.
    const response = await fetch(await client.fileLink(runId, file.name));
    if (!response.ok) throw new Error(`Could not fetch ${file.name} (${response.status}).`);
    return response.blob();
  }

  async function download(file: FileView) {
    try {
      const url = URL.createObjectURL(await fileBlob(file));
      const a = h("a", { href: url, download: file.name });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      showError(err);
    }
  }

  async function showPreview(file: FileView, into: HTMLElement) {
    try {
      const text = await (await fileBlob(file)).text();
      into.innerHTML = /text\/plain/.test(file.contentType) ? "" : safeHtml(text, file.contentType);
      if (/text\/plain/.test(file.contentType)) into.append(h("pre", {}, text));
      // On a phone the preview opens below the screen: bring it up.
      into.scrollIntoView({ block: "start", behavior: "smooth" });
    } catch (err) {
      showError(err);
    }
  }

  function drawUsage() {
    if (!view) return;
    const u = view.usage;
    render(
      usage,
      h("h2", { id: "usage-h" }, "Usage"),
      h(
        "dl",
        { class: "usage" },
        h("dt", {}, "Tokens"),
        h("dd", {}, `${u.promptTokens + u.completionTokens} (${u.promptTokens} in, ${u.completionTokens} out)`),
        h("dt", {}, "Model calls"),
        h("dd", {}, String(u.llmCalls)),
        h("dt", {}, "Tool calls"),
        h("dd", {}, String(u.toolCalls)),
        h("dt", {}, "State transitions"),
        h("dd", {}, u.stateTransitions === undefined ? "counted when the run ends" : String(u.stateTransitions)),
        h("dt", {}, "Estimated cost"),
        h("dd", {}, view.estimatedCostUsd === undefined ? "none: no price for this model" : usd(view.estimatedCostUsd)),
      ),
    );
  }

  const who = (data: { agent?: string; taskId?: string; persona?: string }) =>
    h("span", { class: "who" }, [data.agent, data.taskId, data.persona].filter(Boolean).join(" · "));
  const add = (event: RunEvent, ...children: (Node | string | null)[]) => {
    const item = h(
      "li",
      { class: `entry ${event.type.replace(".", "-")}`, dataset: { seq: String(event.seq), type: event.type } },
      ...children,
    );
    activity.append(item);
    return item;
  };

  /** The event log's lines of each agent's open text block, marked if the block is withdrawn. */
  const blockLogLines = new Map<string, HTMLElement[]>();

  function onEvent(event: RunEvent) {
    const logLine = h("li", { dataset: { seq: String(event.seq), type: event.type } }, `${event.seq} ${event.type}`);
    eventLog.append(logLine);
    // Each event may follow a model call: usage (and the rest) catch up shortly after.
    if (!ended(view)) refreshSoon();
    if (event.type === "agent.withdrawn") withdraw(event.data, logLine);
    if (event.type === "agent.delta" || event.type === "agent.reasoning") {
      const key = sourceKey(event.data);
      if (!streamed.open().some((b) => sourceKey(b.source) === key) && !reasoning.open().some((b) => sourceKey(b.source) === key))
        blockLogLines.set(key, []);
      blockLogLines.get(key)?.push(logLine);
    }
    // An agent doing something else ends the text it streamed (a thought ends it below) and its reasoning.
    const source = textSource(event.data);
    if (source && event.type !== "agent.delta" && event.type !== "agent.thought" && event.type !== "agent.reasoning") streamed.end(source);
    if (source && event.type !== "agent.reasoning") reasoning.end(source);
    const { type, data: d } = event;
    switch (type) {
      case "agent.reasoning": {
        // Shown collapsed: what the model thought, for whoever wants to read it.
        const block = reasoning.add(d, d.text, () => {
          const element = h("pre", { class: "reasoning" });
          const summary = h("summary", {}, "Reasoning");
          add(event, who(d), h("details", { class: "reasoning" }, summary, element));
          return { element, summary };
        });
        block.view.element.textContent = block.text;
        block.view.summary.textContent = `Reasoning (${block.text.length} characters)`;
        break;
      }
      case "agent.delta": {
        const block = streamed.add(d, d.text, () => {
          const element = h("div", { class: "text prose" });
          add(event, who(d), element);
          return element;
        });
        prose(block.view, block.text);
        break;
      }
      case "agent.thought":
        // The same text as the deltas before it, when the model streamed: shown once.
        if (streamed.end(d)) break;
        add(event, who(d), prose(h("div", { class: "text prose" }), d.text));
        break;
      case "tool.called":
        toolCalls.set(d.callId, {
          args: d.arguments,
          shown: add(event, who(d), h("strong", {}, `→ ${d.tool}`), argumentsView(d.arguments)),
        });
        break;
      case "tool.result":
        add(
          event,
          who(d),
          h("strong", { class: d.ok ? "ok" : "bad" }, `${d.ok ? "✓" : "✗"} ${d.tool}`),
          h("pre", { class: "output" }, String(d.output).slice(0, 2000)),
        );
        break;
      case "code": {
        if (d.part === "source") {
          // The code is shown highlighted below: the call's arguments above leave it out, not show it twice.
          const call = toolCalls.get(d.callId);
          call?.shown.querySelector(".args")?.replaceWith(argumentsView(call.args, d.text));
          const code = h("code", { class: `language-${d.language}` });
          const html = highlightHtml(d.text, d.language);
          if (html === undefined) code.textContent = d.text;
          else code.innerHTML = html; // highlight.js escapes every character of the code
          const block = add(event, who(d), h("strong", {}, `Code (${d.language})`), h("pre", { class: "code" }, code));
          codeBlocks.set(d.callId, block);
          break;
        }
        const output = h("pre", { class: `code-output ${d.ok === false ? "bad" : ""}`, dataset: { callId: d.callId } }, d.text);
        const block = codeBlocks.get(d.callId);
        if (block) block.append(h("strong", { class: d.ok === false ? "bad" : "ok" }, "Output"), output);
        else add(event, who(d), h("strong", {}, "Output"), output);
        break;
      }
      case "report.delta": {
        // The report as it is written, rendered as it arrives; the saved file follows as file.created.
        const key = `${d.callId}:${d.name}`;
        let open = openReports.get(key);
        if (!open) {
          const text = h("div", { class: "text prose report" });
          add(event, who(d), h("strong", {}, `Writing ${d.name}`), text);
          open = { element: text, text: "" };
          openReports.set(key, open);
        }
        open.text += d.text;
        prose(open.element, open.text);
        break;
      }
      case "search.progress":
        add(event, who(d), h("strong", {}, `Search (${d.stage}): `), d.detail);
        break;
      case "model.retrying":
        add(
          event,
          who(d),
          h("strong", { class: "warn" }, "↻ Model call failed: "),
          `${d.reason}. Retry ${d.attempt} of ${d.retries} in ${(d.waitMs / 1000).toFixed(1)} s.`,
        );
        break;
      case "agent.withdrawn":
        break; // done above: the broken reply's text is gone from the page
      case "task.started":
        lanes.set(`${d.iteration}:${d.taskId}`, {
          key: `${d.iteration}:${d.taskId}`,
          taskId: d.taskId,
          title: d.title,
          iteration: d.iteration,
          start: event.at,
          status: "running",
        });
        drawTimeline();
        break;
      case "task.completed": {
        const lane = lanes.get(`${d.iteration}:${d.taskId}`);
        if (lane) Object.assign(lane, { end: event.at, status: d.status });
        drawTimeline();
        add(
          event,
          h("span", { class: "who" }, d.taskId),
          `${d.status === "succeeded" ? "✓" : "✗"} ${d.title}`,
          d.files?.length ? h("small", { class: "muted" }, ` · files: ${d.files.join(", ")}`) : null,
        );
        void refresh();
        break;
      }
      case "plan.updated":
        if (view) view.plan = d.plan;
        drawPlan();
        break;
      case "interrupt.opened":
        // A tool call's arguments are shown readably on its card, not as the summary's JSON.
        add(
          event,
          h("strong", {}, "Waiting for you: "),
          d.kind === "tool_approval" && d.toolName ? `allow ${d.toolName}?` : d.summary.split("\n")[0],
        );
        announce("The run is waiting for your decision.");
        void refresh();
        break;
      case "interrupt.resolved":
        add(event, `Decided: ${d.decision}${d.message ? ` — ${d.message}` : ""}`);
        void refresh();
        break;
      case "file.created":
        add(
          event,
          d.taskId ? h("span", { class: "who" }, d.taskId) : null,
          h("strong", {}, "File: "),
          `${d.name} `,
          h("small", { class: "muted" }, `${d.bytes} bytes`),
        );
        break;
      case "tool_source.unavailable":
        add(event, h("strong", { class: "bad" }, `Tool source ${d.source} unavailable: `), d.reason);
        break;
      case "run.started":
        add(event, `Started (${d.mode}).`);
        break;
      default:
        if (type.startsWith("run.")) {
          add(event, h("strong", {}, type.replace("run.", "Run ").replace("_", " ")), "reason" in d && d.reason ? ` — ${d.reason}` : "");
          announce(`The run ${type.slice(4)}.`);
          void refresh();
        } else add(event, type);
    }
  }

  /** A reply that broke off and is retried: its text and reasoning leave the page; the event log marks them. */
  function withdraw(source: TextSource, logLine: HTMLElement) {
    streamed.end(source)?.view.closest("li")?.remove();
    reasoning.end(source)?.view.element.closest("li")?.remove();
    const lines = blockLogLines.get(sourceKey(source)) ?? [];
    for (const line of lines) line.classList.add("withdrawn");
    blockLogLines.delete(sourceKey(source));
    logLine.append(
      ` (${lines.length} event${lines.length === 1 ? "" : "s"} of ${source.agent}${source.taskId ? ` ${source.taskId}` : ""} withdrawn)`,
    );
  }

  async function cancelRun() {
    cancel.disabled = true;
    try {
      await client.cancelRun(runId);
      await refresh();
    } catch (err) {
      showError(err);
    } finally {
      cancel.disabled = false;
    }
  }

  const showConnection = (state: "live" | "reconnecting" | "ended") => {
    connection.textContent = state === "live" ? "live" : state === "reconnecting" ? "reconnecting…" : "ended";
    connection.dataset.state = state;
  };
  /** The run's events, live, until its end or until the page closes; reconnecting for as long as it takes. */
  async function follow(streamUrl: string) {
    try {
      const events = client.follow(runId, {
        streamUrl,
        signal: leaving.signal,
        maxFailures: Number.POSITIVE_INFINITY,
        onOpen: () => showConnection("live"),
        onReconnect: () => showConnection("reconnecting"),
      });
      for await (const event of events) onEvent(event);
      showConnection("ended");
    } catch (err) {
      if (leaving.signal.aborted) return;
      showConnection("ended");
      showError(err);
    }
  }

  const leaving = new AbortController();
  const timer = window.setInterval(drawTimeline, 1000);
  void refresh().then(() => {
    if (!view) return;
    drawTimeline();
    void follow(view.links.stream);
  });
  return () => {
    leaving.abort();
    clearInterval(timer);
    if (refreshTimer !== undefined) clearTimeout(refreshTimer);
  };
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

/**
 * Where agent protocols reach this run: the MCP endpoint (its get_run tool follows the run by id),
 * the A2A agent's card (the run is the task of the same id) and the run's stream as AG-UI events.
 * Served beside the stream (on AWS the stream URL, which can stream progress and elicitation).
 */
function protocolLinks(runId: string, stream: string) {
  const mcp = `${new URL(stream).origin}/mcp`;
  const a2a = `${new URL(stream).origin}/a2a`;
  return [
    h(
      "a",
      { href: mcp, class: "protocol-link", title: `An MCP client at ${mcp} follows this run with get_run {"runId": "${runId}"}` },
      "MCP",
    ),
    " · ",
    h(
      "a",
      {
        href: "/.well-known/agent-card.json",
        class: "protocol-link",
        title: `An A2A client (this agent card) reads this run as task ${runId} at ${a2a}: GetTask, SubscribeToTask, CancelTask`,
      },
      "A2A",
    ),
    " · ",
    h(
      "a",
      {
        href: `${stream}?protocol=ag-ui`,
        class: "protocol-link",
        title: "This run's events as AG-UI events (send the API key as a bearer token)",
      },
      "AG-UI stream",
    ),
  ];
}
