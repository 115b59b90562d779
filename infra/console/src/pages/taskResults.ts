import type { RunView, TaskView } from "../../../../shared/contracts/responses.js";
import { client } from "../api.js";
import { h, render } from "../dom.js";
import { safeHtml } from "../markdown.js";

/**
 * The tasks' results as the run's view gives them: each a preview (a view holds many tasks, so each
 * result is cut at a few KB), the whole read on demand with "Show all", and the tasks past the
 * view's page read with "More tasks".
 */
export class TaskResults {
  /** Drawn again only when the tasks' results change: a result opened whole stays open. */
  private shown: string | undefined;

  constructor(
    private readonly section: HTMLElement,
    private readonly runId: string,
    private readonly onError: (err: unknown) => void,
  ) {}

  draw(view: RunView) {
    const ended = view.tasks.filter((task) => task.result !== null);
    const key = `${ended.map((t) => `${t.taskId}:${t.resultBytes}`).join(" ")}|${view.nextTasksCursor ?? ""}`;
    if (key === this.shown) return;
    this.shown = key;
    this.section.hidden = ended.length === 0;
    const list = h(
      "div",
      { class: "task-results" },
      ended.map((task) => this.entry(task)),
    );
    render(this.section, h("h2", { id: "results-h" }, "Task results"), list, this.moreButton(list, view.nextTasksCursor));
  }

  private entry(task: TaskView) {
    const prose = h("div", { class: "prose task-result" });
    prose.innerHTML = safeHtml(task.result ?? "");
    const showAll = task.resultCut
      ? h(
          "button",
          { type: "button", class: "link", onclick: () => void this.showAll(task, prose, showAll) },
          `Show all (${kb(task.resultBytes ?? 0)})`,
        )
      : null;
    return h(
      "article",
      { class: "task-result-entry", dataset: { taskId: task.taskId } },
      h("h3", { class: "file-task" }, h("span", { class: "who" }, task.taskId), ` ${task.title}`),
      prose,
      showAll,
    );
  }

  private async showAll(task: TaskView, prose: HTMLElement, button: HTMLButtonElement | null) {
    if (button) button.disabled = true;
    try {
      prose.innerHTML = safeHtml(await client.taskResult(this.runId, task.taskId));
      button?.remove();
    } catch (err) {
      if (button) button.disabled = false;
      this.onError(err);
    }
  }

  /** The next page of tasks, appended to the list, while the run has more. */
  private moreButton(list: HTMLElement, cursor: string | null): HTMLButtonElement | null {
    if (!cursor) return null;
    const button: HTMLButtonElement = h(
      "button",
      {
        type: "button",
        onclick: async () => {
          button.disabled = true;
          try {
            const page = await client.listTasks(this.runId, { cursor });
            list.append(...page.tasks.filter((task) => task.result !== null).map((task) => this.entry(task)));
            const more = this.moreButton(list, page.nextCursor);
            if (more) button.replaceWith(more);
            else button.remove();
          } catch (err) {
            button.disabled = false;
            this.onError(err);
          }
        },
      },
      "More tasks",
    );
    return button;
  }
}

const kb = (bytes: number) => (bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(bytes < 10_240 ? 1 : 0)} KB`);
