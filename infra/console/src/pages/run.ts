import { ApiError } from "../../../../shared/apiClient/errors.js";
import { EMPTY_RUN, type FoldedRun, type FoldedTask, foldRun } from "../../../../shared/apiClient/runFold.js";
import { attemptLine, deliveryHeadline } from "../../../../shared/apiClient/webhookDeliveries.js";
import type { RunEvent } from "../../../../shared/contracts/events.js";
import type { FileView, RunView, WebhookDeliveries } from "../../../../shared/contracts/responses.js";
import { TERMINAL_STATUSES } from "../../../../shared/contracts/terminal.js";
import { budgetText } from "../../../display/budget.js";
import { evaluationText } from "../../../display/evaluation.js";
import { forkPointText } from "../../../display/lineage.js";
import { client, enc } from "../api.js";
import { announce, h, render, usd } from "../dom.js";
import { axisTicks, seconds } from "../durations.js";
import { safeHtml } from "../markdown.js";
import { approvalCard, type ToolInfo } from "./approvals.js";
import { Forks } from "./fork.js";
import { Activity } from "./runActivity.js";
import { TaskResults } from "./taskResults.js";

const ended = (run: RunView | undefined) => run !== undefined && TERMINAL_STATUSES.has(run.status);
/** How many times the page reads an ended run again for its state transitions (2 s apart) before it leaves it to a reload. */
const MAX_TRANSITION_READS = 30;

/** A run live: plan, task lanes, tool calls and text as they stream, approvals, answer, files, usage. */
export function runPage(app: HTMLElement, runId: string) {
  const page = new RunPage(app, runId);
  return () => page.close();
}

/** The run page's sections, made once. */
interface Parts {
  title: HTMLElement;
  meta: HTMLElement;
  /** A fork's parent, a parent's forks. */
  lineage: HTMLElement;
  /** The task whole, when the title cuts it: opened on demand. */
  taskText: HTMLElement;
  wholeTask: HTMLDetailsElement;
  connection: HTMLElement;
  cancel: HTMLButtonElement;
  waiting: HTMLElement;
  plan: HTMLElement;
  timeline: HTMLElement;
  /** Each task's result, previewed, whole on demand. */
  results: HTMLElement;
  activity: HTMLElement;
  answer: HTMLElement;
  files: HTMLElement;
  usage: HTMLElement;
  /** The run's webhook deliveries and their attempts (hidden when the run has no webhook). */
  webhooks: HTMLElement;
  eventLog: HTMLElement;
  error: HTMLElement;
}

function layout(app: HTMLElement, onCancel: () => void): Parts {
  const taskText = h("p", { class: "task-text" });
  const parts: Parts = {
    title: h("h1", {}, "Run"),
    meta: h("p", { class: "meta" }),
    lineage: h("div", { class: "lineage" }),
    taskText,
    wholeTask: h("details", { class: "whole-task", hidden: true }, h("summary", {}, "Show the whole task"), taskText),
    connection: h("span", { class: "connection", role: "status" }, "connecting…"),
    cancel: h("button", { type: "button", class: "danger", hidden: true, onclick: onCancel }, "Cancel run"),
    waiting: h("section", { "aria-label": "Waiting for you", class: "waiting" }),
    plan: h("section", { "aria-labelledby": "plan-h", class: "plan-section" }),
    timeline: h("section", { "aria-labelledby": "timeline-h", class: "timeline-section" }),
    results: h("section", { "aria-labelledby": "results-h", class: "results-section", hidden: true }),
    activity: h("ol", { class: "activity", "aria-label": "Activity" }),
    answer: h("section", { "aria-labelledby": "answer-h", class: "answer-section", hidden: true }),
    files: h("section", { "aria-labelledby": "files-h", class: "files-section", hidden: true }),
    usage: h("section", { "aria-labelledby": "usage-h", class: "usage-section" }),
    webhooks: h("section", { "aria-labelledby": "webhooks-h", class: "webhooks-section", hidden: true }),
    eventLog: h("ol", { id: "event-log", class: "event-log" }),
    error: h("p", { class: "error", role: "alert", hidden: true }),
  };
  const p = parts;
  render(
    app,
    h("div", { class: "row spread" }, p.title, h("div", { class: "row" }, p.connection, p.cancel)),
    p.wholeTask,
    p.meta,
    p.lineage,
    p.error,
    p.waiting,
    h(
      "div",
      { class: "grid" },
      h(
        "div",
        { class: "col" },
        p.plan,
        p.timeline,
        p.results,
        h("section", { "aria-labelledby": "activity-h", class: "activity-section" }, h("h2", { id: "activity-h" }, "Activity"), p.activity),
      ),
      h("div", { class: "col side" }, p.answer, p.files, p.usage, p.webhooks),
    ),
    h("details", { class: "card" }, h("summary", {}, "Event log"), p.eventLog),
  );
  return parts;
}

/**
 * The page's life: the run read from the API (refresh), its events read from the stream and folded
 * (runFold.ts), and what each changes drawn. Each method is one phase: read, decide, or draw.
 */
class RunPage {
  private view: RunView | undefined;
  /** The run's events folded: the tasks' lanes and the plan as the stream tells them. */
  private run: FoldedRun = EMPTY_RUN;
  private readonly parts: Parts;
  private readonly activity: Activity;
  /** "Fork from here" on tool results, tasks and plan steps, once the run has ended. */
  private readonly forks: Forks;
  private readonly results: TaskResults;
  private toolList: Promise<ToolInfo[]> | undefined;
  /** Cards and files are drawn again only when they change: a card being edited, or a preview being read, stays. */
  private shownCards: string | undefined;
  private shownFiles: string | undefined;
  private shownPlan: string | undefined;
  private shownTimeline: string | undefined;
  private refreshTimer: number | undefined;
  /** The run's reads started so far, and the latest of them whose answer was drawn. */
  private reads = 0;
  private drawnRead = 0;
  /** Reads after the end made so far to find the state transitions counted. */
  private transitionReads = 0;
  private readonly leaving = new AbortController();
  private readonly timer: number;
  /** Reads the run's webhook deliveries again while one waits for a retry. */
  private webhookTimer: number | undefined;

  constructor(
    app: HTMLElement,
    private readonly runId: string,
  ) {
    this.parts = layout(app, () => void this.cancelRun());
    this.forks = new Forks(runId, () => this.view?.input ?? "");
    // The planner's own planning calls are forked from their plan step instead.
    this.activity = new Activity(this.parts.activity, this.parts.eventLog, (result) =>
      result.tool === "planning"
        ? null
        : this.forks.button(
            { kind: "tool", callId: result.callId, tool: result.tool, who: result.taskId ?? result.agent ?? "", taskId: result.taskId },
            !ended(this.view),
          ),
    );
    this.results = new TaskResults(this.parts.results, runId, (err) => this.showError(err));
    this.timer = window.setInterval(() => this.drawTimeline(), 1000);
    void this.refresh().then(() => {
      if (!this.view) return;
      this.drawTimeline();
      void this.follow(this.view.links.stream);
    });
  }

  close() {
    this.leaving.abort();
    clearInterval(this.timer);
    if (this.refreshTimer !== undefined) clearTimeout(this.refreshTimer);
    if (this.webhookTimer !== undefined) clearTimeout(this.webhookTimer);
  }

  /**
   * Read and draw: the run's webhook deliveries, once the run is at a status that sends one (it
   * waits for a person or for the model, or ended); again every few seconds while one is pending,
   * so each retry shows.
   */
  private async readWebhooks(view: RunView) {
    const sends = view.status === "awaiting_input" || Boolean(view.statusDetail) || ended(view);
    if (this.webhookTimer !== undefined || !sends) return;
    let list: WebhookDeliveries;
    try {
      list = await client.listWebhooks(this.runId);
    } catch {
      return; // the section keeps what it showed; the next refresh reads again
    }
    if (this.leaving.signal.aborted) return;
    drawWebhooks(this.parts.webhooks, list);
    if (list.deliveries.some((d) => d.status === "pending"))
      this.webhookTimer = window.setTimeout(() => {
        this.webhookTimer = undefined;
        if (this.view) void this.readWebhooks(this.view);
      }, WEBHOOK_READ_MS);
  }

  private readonly tools = () => (this.toolList ??= client.listTools().then((r) => r.tools));

  private showError(err: unknown) {
    this.parts.error.textContent =
      err instanceof ApiError && err.status === 401 ? "Your API key is no longer accepted. Sign in again." : (err as Error).message;
    this.parts.error.hidden = false;
  }

  /** Read: the run as the API has it now; then all of it drawn. */
  private async refresh() {
    const read = ++this.reads;
    let view: RunView;
    try {
      view = await client.getRun(this.runId);
    } catch (err) {
      this.showError(err);
      return;
    }
    // Reads overlap (one per burst of events, one at the run's end): an answer that comes after a
    // later read's is older, and would show an ended run as running again, with nothing to read it anew.
    if (read < this.drawnRead) return;
    this.drawnRead = read;
    this.view = view;
    this.parts.error.hidden = true;
    this.drawView(this.view);
    this.awaitTransitionCount(this.view);
    void this.readWebhooks(this.view);
  }

  /**
   * Decide: the state transitions are counted once the execution has ended, a moment after the run
   * (its last step may still be titling the session): read the run again until they are there.
   */
  private awaitTransitionCount(view: RunView) {
    if (!ended(view) || view.usage.stateTransitions !== undefined || this.transitionReads >= MAX_TRANSITION_READS) return;
    this.transitionReads++;
    this.refreshTimer ??= window.setTimeout(() => {
      this.refreshTimer = undefined;
      void this.refresh();
    }, 2_000);
  }

  /** The run again soon, once however many events arrive meanwhile: usage goes up with each model call. */
  private refreshSoon() {
    this.refreshTimer ??= window.setTimeout(() => {
      this.refreshTimer = undefined;
      void this.refresh();
    }, 500);
  }

  /** Read: the run's events, live, until its end or until the page closes; reconnecting for as long as it takes. */
  private async follow(streamUrl: string) {
    const { signal } = this.leaving;
    try {
      const events = client.follow(this.runId, {
        streamUrl,
        signal,
        maxFailures: Number.POSITIVE_INFINITY,
        onOpen: () => this.showConnection("live"),
        onReconnect: () => this.showConnection("reconnecting"),
      });
      for await (const event of events) this.onEvent(event);
      this.showConnection("ended");
    } catch (err) {
      if (signal.aborted) return;
      this.showConnection("ended");
      this.showError(err);
    }
  }

  /** One event: folded (read), shown in the activity and event log (draw), then what else it changes (decide). */
  private onEvent(event: RunEvent) {
    const before = this.run;
    this.run = foldRun(before, event);
    if (this.run === before) return; // delivered already
    this.activity.show(event, before, this.run);
    // Each event may follow a model call: usage (and the rest) catch up shortly after.
    if (!ended(this.view)) this.refreshSoon();
    const change = changeOf(event);
    if (change.timeline) this.drawTimeline();
    if (change.plan && this.view) {
      this.view.plan = this.run.plan ?? this.view.plan;
      this.drawPlan(this.view);
    }
    if (change.announce) announce(change.announce);
    if (change.refresh) void this.refresh();
  }

  private showConnection(state: "live" | "reconnecting" | "ended") {
    const { connection } = this.parts;
    connection.textContent = state === "live" ? "live" : state === "reconnecting" ? "reconnecting…" : "ended";
    connection.dataset.state = state;
  }

  private async cancelRun() {
    const { cancel } = this.parts;
    cancel.disabled = true;
    try {
      await client.cancelRun(this.runId);
      await this.refresh();
    } catch (err) {
      this.showError(err);
    } finally {
      cancel.disabled = false;
    }
  }

  /** Draw: every section from the run as the API has it. */
  private drawView(view: RunView) {
    const { parts } = this;
    drawHeader(parts, view);
    const cards = view.pendingInterrupts.map((i) => i.interruptId).join(" ");
    if (cards !== this.shownCards) {
      this.shownCards = cards;
      render(
        parts.waiting,
        view.pendingInterrupts.map((i) => approvalCard(this.runId, i, this.tools, () => void this.refresh())),
      );
    }
    this.drawPlan(view);
    drawAnswer(parts.answer, view);
    const fileNames = view.files.map((f) => `${f.name}:${f.bytes}:${f.taskId ?? ""}`).join(" ");
    if (fileNames !== this.shownFiles) {
      this.shownFiles = fileNames;
      drawFiles(parts.files, view, new FileActions(this.runId, view, (err) => this.showError(err)));
    }
    drawUsage(parts.usage, view);
    this.results.draw(view);
    this.drawTimeline();
    for (const button of parts.activity.querySelectorAll<HTMLButtonElement>(".fork-from-here")) button.hidden = !ended(view);
  }

  private drawPlan(view: RunView) {
    const tasks = [...this.run.tasks.values()];
    // Drawn again only when it changes: a focused "Fork from here" stays where it is.
    const shown = JSON.stringify([view.plan, view.mode, view.requestedMode, ended(view), tasks.map((t) => [t.stepIndex, t.iteration])]);
    if (shown === this.shownPlan) return;
    this.shownPlan = shown;
    drawPlan(this.parts.plan, view, (step, index) => {
      if (!ended(view)) return null;
      // The iteration that handed the step out last (a step not met runs again in a later one).
      const iterations = tasks.filter((t) => t.stepIndex === index).map((t) => t.iteration);
      const iteration = iterations.length ? Math.max(...iterations) : undefined;
      return this.forks.button({ kind: "step", index, title: step.title, iteration }, false);
    });
  }

  private drawTimeline() {
    const { view } = this;
    // Once the run has ended its lanes no longer move: drawn again only when they change.
    const shown = ended(view) ? JSON.stringify([...this.run.tasks.values()]) : undefined;
    if (shown !== undefined && shown === this.shownTimeline) return;
    this.shownTimeline = shown;
    drawTimeline(this.parts.timeline, [...this.run.tasks.values()], view, (lane) =>
      ended(view) ? this.forks.button({ kind: "task", iteration: lane.iteration, taskId: lane.taskId, title: lane.title }, false) : null,
    );
  }
}

/** Decide: what an event changes beyond its activity entry. */
function changeOf(event: RunEvent): { timeline?: boolean; plan?: boolean; refresh?: boolean; announce?: string } {
  switch (event.type) {
    case "task.started":
      return { timeline: true };
    case "task.completed":
      return { timeline: true, refresh: true };
    case "plan.updated":
      return { plan: true };
    case "interrupt.opened":
      return { announce: "The run is waiting for your decision.", refresh: true };
    case "interrupt.resolved":
      return { refresh: true };
    case "run.started":
      return {};
    default:
      // The run's end, a resume, a wait in its session's queue: said aloud, and the run read again.
      if (event.type.startsWith("run.")) return { announce: `The run ${event.type.slice(4)}.`, refresh: true };
      return {};
  }
}

function drawHeader(parts: Parts, view: RunView) {
  const cut = view.input.length > 80 || view.input.includes("\n");
  parts.title.textContent = cut ? `${(view.input.split("\n")[0] ?? "").slice(0, 79)}…` : view.input;
  parts.taskText.textContent = view.input;
  parts.wholeTask.hidden = !cut;
  document.title = `${parts.title.textContent} · Stepwise`;
  render(
    parts.meta,
    h("span", { class: `badge ${view.status}` }, view.status.replace("_", " ")),
    ` ${view.mode ?? view.requestedMode} · `,
    h("code", {}, view.runId),
    " · session ",
    h("a", { href: `#/runs?sessionId=${enc(view.sessionId)}` }, view.sessionId),
    view.status === "queued" && view.queuedBehind
      ? [" · waits for ", h("a", { href: `#/runs/${enc(view.queuedBehind)}` }, view.queuedBehind), " to end"]
      : null,
    view.statusDetail ? [" · ", h("span", { class: "status-detail" }, view.statusDetail)] : null,
    view.links.console ? [" · ", h("a", { href: view.links.console, target: "_blank", rel: "noopener" }, "Step Functions console")] : null,
    " · ",
    protocolLinks(view.runId, view.links.stream),
  );
  render(parts.lineage, lineage(view));
  parts.cancel.hidden = ended(view);
}

/** A fork's parent and a parent's forks, each a link to its run page. */
function lineage(view: RunView) {
  const runLink = (runId: string) => h("a", { href: `#/runs/${enc(runId)}` }, runId);
  return [
    view.forkOf ? h("p", { class: "fork-of" }, "Forked from ", runLink(view.forkOf.runId), ` at ${forkPointText(view.forkOf.at)}`) : null,
    view.forks.length
      ? h(
          "div",
          { class: "forks" },
          h("p", {}, "Forks:"),
          h(
            "ul",
            {},
            view.forks.map((f) =>
              h(
                "li",
                {},
                runLink(f.runId),
                ` at ${forkPointText(f.at)} · `,
                h("span", { class: `badge ${f.status}` }, f.status.replace("_", " ")),
              ),
            ),
          ),
        )
      : null,
  ];
}

type PlanStepView = NonNullable<RunView["plan"]>["steps"][number];

function drawPlan(section: HTMLElement, view: RunView, forkButton: (step: PlanStepView, index: number) => HTMLElement | null) {
  const p = view.plan;
  render(
    section,
    h("h2", { id: "plan-h" }, "Plan"),
    !p
      ? h(
          "p",
          { class: "muted" },
          view.mode === "plan_solve" || view.requestedMode === "plan_solve" ? "Planning…" : "No plan: this run is handled by one agent.",
        )
      : h(
          "ol",
          { class: "plan" },
          p.steps.map((step, index) =>
            h(
              "li",
              { class: `step ${step.status}`, dataset: { status: step.status } },
              h("span", { class: `badge ${step.status}` }, step.status.replace("_", " ")),
              // Completed or not, a step whose tasks a person left undone says so beside its status.
              step.undone ? [" ", h("span", { class: "badge undone" }, `${step.undone} not done`)] : null,
              " ",
              step.title,
              forkButton(step, index),
              h(
                "ul",
                {},
                step.tasks.map((t) => h("li", {}, t)),
              ),
              step.verdict
                ? h(
                    "p",
                    { class: `verdict ${step.verdict.met ? "met" : "not-met"}` },
                    `Done when ${step.verdict.met ? (step.undone ? "met as far as it could be" : "met") : "not met — revised, runs again"}${step.verdict.reason ? `: ${step.verdict.reason}` : ""}`,
                  )
                : null,
            ),
          ),
        ),
  );
}

/** How often the page reads a pending delivery again (the first retry waits about 5 s). */
const WEBHOOK_READ_MS = 3_000;

/** The run's webhook and each delivery: its state, when its next retry is due, every attempt. */
function drawWebhooks(section: HTMLElement, list: WebhookDeliveries) {
  section.hidden = !list.webhook;
  if (!list.webhook) return;
  render(
    section,
    h("h2", { id: "webhooks-h" }, "Webhooks"),
    h("p", { class: "muted" }, list.webhook.url),
    list.deliveries.length === 0
      ? h("p", { class: "muted" }, "No deliveries yet.")
      : h(
          "ul",
          { class: "deliveries" },
          list.deliveries.map((delivery) =>
            h(
              "li",
              { class: `delivery ${delivery.status}`, dataset: { deliveryId: delivery.deliveryId, status: delivery.status } },
              h("strong", {}, deliveryHeadline(delivery)),
              h(
                "ol",
                { class: "attempts" },
                delivery.attempts.map((attempt) => h("li", { class: attempt.ok ? "ok" : "bad", title: attempt.at }, attemptLine(attempt))),
              ),
            ),
          ),
        ),
  );
}

/** A task's lane: from its start to its end (or now), on its step's time axis. */
type Lane = FoldedTask & { startedAt: string };

/** The tasks of each plan step as lanes on the step's own time axis, so overlap between its parallel tasks is visible. */
function drawTimeline(
  section: HTMLElement,
  tasks: FoldedTask[],
  view: RunView | undefined,
  forkButton: (lane: Lane) => HTMLElement | null,
) {
  const all = tasks.filter((task): task is Lane => task.startedAt !== undefined);
  if (all.length === 0) {
    const oneAgent = view?.mode !== undefined && view.mode !== null && view.mode !== "plan_solve";
    return render(
      section,
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
  const byStep = new Map<number, Lane[]>();
  for (const lane of all) byStep.set(lane.iteration, [...(byStep.get(lane.iteration) ?? []), lane]);
  render(
    section,
    h("h2", { id: "timeline-h" }, "Tasks"),
    [...byStep].map(([iteration, group]) => stepLanes(iteration, group, forkButton)),
  );
}

/** A task's status on its lane: one a person left undone is not done, whatever its executor answered. */
const laneStatus = (lane: Lane) => (lane.undone?.length ? "not_done" : lane.status);

function stepLanes(iteration: number, group: Lane[], forkButton: (lane: Lane) => HTMLElement | null) {
  const now = new Date().toISOString();
  const t = (iso: string) => Date.parse(iso);
  const min = Math.min(...group.map((l) => t(l.startedAt)));
  const max = Math.max(...group.map((l) => t(l.endedAt ?? now)), min + 1);
  const span = max - min;
  return [
    h("h3", { class: "step-h" }, `Step ${iteration + 1}`),
    h(
      "div",
      { class: "lanes", role: "list", "aria-label": `Step ${iteration + 1} tasks` },
      group.map((lane) => {
        const left = ((t(lane.startedAt) - min) / span) * 100;
        const width = Math.max(((t(lane.endedAt ?? now) - t(lane.startedAt)) / span) * 100, 1);
        const took = seconds(t(lane.endedAt ?? now) - t(lane.startedAt));
        return h(
          "div",
          {
            class: "lane",
            role: "listitem",
            dataset: { taskId: lane.taskId, start: lane.startedAt, end: lane.endedAt ?? "", status: laneStatus(lane) },
          },
          h("span", { class: "lane-label", title: `${lane.taskId} ${lane.title}` }, `${lane.taskId} ${lane.title} `, forkButton(lane)),
          h(
            "span",
            { class: "lane-track" },
            h("span", {
              class: `lane-bar ${laneStatus(lane)}`,
              style: { left: `${left.toFixed(2)}%`, width: `${Math.min(width, 100 - left).toFixed(2)}%` },
              title: `${lane.startedAt} → ${lane.endedAt ?? "running"}`,
            }),
          ),
          h("span", { class: "lane-duration" }, lane.endedAt ? took : `${took}…`),
          h("span", { class: "visually-hidden" }, ` ${laneStatus(lane).replace("_", " ")}`),
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
          axisTicks(span).map((label, i) => h("span", { class: "tick", style: { left: `${i * 50}%` } }, label)),
        ),
        h("span"),
      ),
    ),
  ];
}

function drawAnswer(section: HTMLElement, view: RunView) {
  if (!view.result && !view.error) return;
  section.hidden = false;
  render(
    section,
    h("h2", { id: "answer-h" }, view.error ? "Error" : "Answer"),
    view.error ? h("p", { class: "error" }, view.error.message) : h("div", { class: "prose answer" }),
  );
  const prose = section.querySelector(".answer");
  if (prose && view.result) prose.innerHTML = safeHtml(view.result);
}

function drawFiles(section: HTMLElement, view: RunView, actions: FileActions) {
  if (view.files.length === 0) return;
  section.hidden = false;
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
          h("button", { type: "button", onclick: () => actions.download(file) }, `Download ${file.name}`),
          actions.previewButton(file, preview),
        ),
      ),
    );
  // The run's own files (uploads, the answer) first, then each task's under its title.
  // A task past the view's page of tasks is not in view.tasks: its files are listed with the run's.
  const ofRun = view.files.filter((f) => !f.taskId || !view.tasks.some((t) => t.taskId === f.taskId));
  const byTask = view.tasks.flatMap((task) => {
    const own = view.files.filter((f) => f.taskId === task.taskId);
    return own.length ? [h("h3", { class: "file-task" }, h("span", { class: "who" }, task.taskId), ` ${task.title}`), list(own)] : [];
  });
  render(section, h("h2", { id: "files-h" }, "Files"), ofRun.length ? list(ofRun) : null, byTask, preview);
}

/** What the Files section's buttons do: download a file, or show its preview. */
class FileActions {
  constructor(
    private readonly runId: string,
    private readonly view: RunView,
    private readonly showError: (err: unknown) => void,
  ) {}

  /** A button showing the file's preview in `into`, when it has one. */
  previewButton(file: FileView, into: HTMLElement) {
    const shown = this.previewOf(file);
    if (!shown) return null;
    return h("button", { type: "button", class: "link", onclick: () => this.showPreview(shown, into) }, `Preview ${file.name}`);
  }

  /** What a file's preview shows: the file itself (Markdown, HTML, text), or a deck's slides as the web page saved beside it. */
  private previewOf(file: FileView): FileView | undefined {
    if (/markdown|html|text\/plain/.test(file.contentType)) return file;
    if (!/\.pptx$/.test(file.name)) return undefined;
    const slides = file.name.replace(/\.pptx$/, ".slides.html");
    return this.view.files.find((f) => f.name === slides);
  }

  private async fileBlob(file: FileView): Promise<Blob> {
    // The API gives a short-lived link to the bytes (in S3, another origin); the link needs no key.
    const response = await fetch(await client.fileLink(this.runId, file.name));
    if (!response.ok) throw new Error(`Could not fetch ${file.name} (${response.status}).`);
    return response.blob();
  }

  async download(file: FileView) {
    try {
      const url = URL.createObjectURL(await this.fileBlob(file));
      const a = h("a", { href: url, download: file.name });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      this.showError(err);
    }
  }

  private async showPreview(file: FileView, into: HTMLElement) {
    try {
      const text = await (await this.fileBlob(file)).text();
      into.innerHTML = /text\/plain/.test(file.contentType) ? "" : safeHtml(text, file.contentType);
      if (/text\/plain/.test(file.contentType)) into.append(h("pre", {}, text));
      // On a phone the preview opens below the screen: bring it up.
      into.scrollIntoView({ block: "start", behavior: "smooth" });
    } catch (err) {
      this.showError(err);
    }
  }
}

function drawUsage(section: HTMLElement, view: RunView) {
  const u = view.usage;
  render(
    section,
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
      ...(view.budget ? [h("dt", {}, "Budget"), h("dd", { class: "budget" }, budgetText(view.budget))] : []),
    ),
    view.evaluation ? evaluationView(view.evaluation) : null,
  );
}

/** The online eval's scores of the ended run (scored after its end), or why it was not scored. */
function evaluationView(evaluation: NonNullable<RunView["evaluation"]>) {
  const { headline, judges, passed } = evaluationText(evaluation);
  return h(
    "div",
    { class: "evaluation" },
    h("h3", {}, "Online eval"),
    h("p", { class: passed === undefined ? "muted" : passed ? "ok" : "bad" }, headline),
    judges.length ? h("ul", { class: "judges" }, ...judges.map((line) => h("li", {}, line))) : null,
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
