import { ApiError } from "../../../../shared/apiClient/errors.js";
import type { ExportedRun, ForkPoint, ForkRunRequest } from "../../../../shared/contracts/replay.js";
import { parsePlanText, planText } from "../../../display/forkEdits.js";
import { forkPointText } from "../../../display/lineage.js";
import { client, enc } from "../api.js";
import { announce, field, h } from "../dom.js";
import { planPoint, taskPoint, toolResultPoint } from "../forkPoints.js";

/**
 * "Fork from here" on an ended run's page: on a tool result, a task and a plan step. Each opens a
 * dialog with the value the fork may change (the result, the answer, the plan, the request), checks
 * what it can, sends `POST /v1/runs/{id}/fork`, shows the API's refusal beside the edit, and on
 * success opens the new run's page.
 */
export type ForkTarget =
  | { kind: "tool"; callId: string; tool: string; who: string; taskId?: string }
  | { kind: "task"; iteration: number; taskId: string; title: string }
  | { kind: "step"; index: number; title: string; iteration: number | undefined };

/** The editor a target gets, resolved against the run's journal. */
interface Editor {
  at: ForkPoint;
  label: string;
  hint: string;
  value: string;
  /** The edits the text stands for, or what is wrong with it (said before anything is sent). */
  edits(text: string, ok: boolean): { edits: NonNullable<ForkRunRequest["edits"]> } | { problem: string };
  /** A tool result may be edited into a failure, and back. */
  ok?: boolean;
}

export class Forks {
  private journal: Promise<ExportedRun["journal"]> | undefined;

  constructor(
    private readonly runId: string,
    /** The run's request as it was: the task fork's editor starts from it. */
    private readonly input: () => string,
  ) {}

  /** The button that opens the dialog for `target`, named for what it forks from. */
  button(target: ForkTarget, hidden: boolean): HTMLButtonElement {
    const name = `Fork from here: ${describe(target)}`;
    const button = h(
      "button",
      { type: "button", class: "link fork-from-here", "aria-label": name, title: name, "aria-haspopup": "dialog", hidden },
      "Fork from here",
    );
    button.addEventListener("click", () => void this.open(target, button));
    return button;
  }

  private readJournal() {
    this.journal ??= client.exportRun(this.runId).then(
      (doc) => doc.journal,
      (err) => {
        this.journal = undefined; // read again at the next try
        throw err;
      },
    );
    return this.journal;
  }

  private async open(target: ForkTarget, opener: HTMLButtonElement) {
    const headingId = `fork-h-${Math.random().toString(36).slice(2)}`;
    const error = h("p", { id: `${headingId}-error`, class: "error", role: "alert", hidden: true });
    const body = h("div", { class: "fork-body" }, h("p", { class: "muted" }, "Reading the run's journal…"));
    const dialog = h(
      "dialog",
      { class: "fork-dialog card", "aria-labelledby": headingId },
      h("h2", { id: headingId, class: "fork-title" }, "Fork from here"),
      h("p", { class: "muted fork-target" }, describe(target)),
      body,
      error,
    );
    dialog.addEventListener("close", () => {
      dialog.remove();
      opener.focus();
    });
    document.body.append(dialog);
    dialog.showModal();
    let editor: Editor | undefined;
    try {
      editor = this.editorFor(target, await this.readJournal());
    } catch (err) {
      return showError(error, (err as Error).message);
    }
    if (!editor) {
      body.replaceChildren(h("p", {}, "This run's journal has no call to fork at here."));
      body.append(h("div", { class: "row" }, h("button", { type: "button", onclick: () => dialog.close() }, "Close")));
      return;
    }
    body.replaceChildren(this.form(editor, dialog, error));
    body.querySelector("textarea")?.focus();
  }

  private form(editor: Editor, dialog: HTMLDialogElement, error: HTMLElement) {
    const text = h("textarea", { name: "edit", rows: 10, class: "mono fork-edit", value: editor.value, spellcheck: false });
    const ok = h("input", { type: "checkbox", name: "ok", checked: editor.ok ?? true });
    const start = h("button", { type: "submit", class: "primary" }, "Start the fork");
    const cancel = h("button", { type: "button", onclick: () => dialog.close() }, "Cancel");
    const invalid = (message: string) => {
      text.setAttribute("aria-invalid", "true");
      text.setAttribute("aria-errormessage", error.id);
      showError(error, message);
      text.focus();
    };
    const submit = async (event: Event) => {
      event.preventDefault();
      error.hidden = true;
      text.removeAttribute("aria-invalid");
      const edited = editor.edits(text.value, ok.checked);
      if ("problem" in edited) return invalid(edited.problem);
      start.disabled = true;
      try {
        const fork = await client.forkRun(this.runId, { at: editor.at, ...(Object.keys(edited.edits).length ? edited : {}) });
        announce(`Fork ${fork.runId} started.`);
        dialog.close();
        location.hash = `#/runs/${enc(fork.runId)}`;
      } catch (err) {
        // The API's refusal (an edit that does not fit, named by its path), beside the edit.
        if (err instanceof ApiError && err.status < 500) invalid(err.message);
        else showError(error, (err as Error).message);
      } finally {
        start.disabled = false;
      }
    };
    return h(
      "form",
      { onsubmit: submit },
      h(
        "p",
        {},
        `From ${forkPointText(editor.at)}: what the run did before it is reused, no model called again; from there it goes on live.`,
      ),
      field(editor.label, text, editor.hint),
      editor.ok === undefined ? null : h("div", { class: "field check" }, h("label", {}, ok, " The call succeeded")),
      // What is wrong with the edit (the console's check or the API's), beside it.
      error,
      h("div", { class: "row" }, start, cancel),
    );
  }

  private editorFor(target: ForkTarget, journal: ExportedRun["journal"]): Editor | undefined {
    if (target.kind === "tool") {
      const point = toolResultPoint(journal, target.callId, target.taskId);
      if (!point) return undefined;
      if (point.question)
        return {
          at: point.at,
          label: "Answer",
          hint: "The answer the agent reads to its question.",
          value: point.output,
          edits: (text) =>
            !text.trim()
              ? { problem: "Write an answer." }
              : { edits: text === point.output ? {} : { answers: [{ callId: target.callId, answer: text }] } },
        };
      return {
        at: point.at,
        label: "Tool result",
        hint: `What ${target.tool} returned; the agent reads the edited result.`,
        value: point.output,
        ok: point.ok,
        edits: (text, ok) => ({
          edits: text === point.output && ok === point.ok ? {} : { toolResults: [{ callId: target.callId, output: text, ok }] },
        }),
      };
    }
    if (target.kind === "task") {
      const at = taskPoint(journal, target.iteration, target.taskId);
      if (!at) return undefined;
      return this.requestEditor(at);
    }
    const point = planPoint(journal, target.iteration);
    if (!point) return undefined;
    const value = planText(point.steps);
    return {
      at: point.at,
      label: "Plan",
      hint: "A step per block, blocks apart by an empty line: the step's title, then each task on a line starting with “- ” (a step's tasks run side by side), and optionally “done when: …”.",
      value,
      edits: (text) => {
        const parsed = parsePlanText(text);
        if ("problem" in parsed) return parsed;
        if (text === value) return { edits: {} };
        return { edits: { plan: { ...(point.title ? { title: point.title } : {}), steps: parsed.steps } } };
      },
    };
  }

  private requestEditor(at: ForkPoint): Editor {
    const input = this.input();
    return {
      at,
      label: "Request",
      hint: "The user's request as the run goes on reading it.",
      value: input,
      edits: (text) => (!text.trim() ? { problem: "Write the request." } : { edits: text === input ? {} : { input: text } }),
    };
  }
}

function describe(target: ForkTarget): string {
  if (target.kind === "tool") return `the result of ${target.tool}${target.who ? ` (${target.who})` : ""}`;
  if (target.kind === "task") return `task ${target.taskId} ${target.title}`;
  return `plan step ${target.index + 1} ${target.title}`;
}

function showError(error: HTMLElement, message: string) {
  error.textContent = message;
  error.hidden = false;
}
