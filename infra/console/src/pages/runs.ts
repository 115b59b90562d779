import { timeAgo } from "../../../../shared/apiClient/timeAgo.js";
import type { RunSummary } from "../../../../shared/contracts/responses.js";
import { client, enc } from "../api.js";
import { field, h, render, usd } from "../dom.js";
import { refreshed } from "../listing.js";

const STATUSES = ["", "queued", "running", "awaiting_input", "succeeded", "failed", "cancelled", "timed_out", "interrupted", "blocked"];

/** The tenant's runs, newest first, filtered by status and session, refreshed every few seconds. */
export function runsPage(app: HTMLElement) {
  const params = new URLSearchParams(location.hash.split("?")[1] ?? "");
  const status = h(
    "select",
    { name: "status" },
    ...STATUSES.map((s) => h("option", { value: s, selected: s === (params.get("status") ?? "") }, s ? s.replace("_", " ") : "any")),
  );
  const session = h("input", { type: "text", name: "sessionId", value: params.get("sessionId") ?? "", placeholder: "ses_…" });
  const body = h("tbody");
  const error = h("p", { class: "error", role: "alert", hidden: true });
  const more = h("button", { type: "button", hidden: true }, "Load more");
  let cursor: string | null = null;
  let rows: RunSummary[] = [];

  const draw = () =>
    render(
      body,
      rows.length === 0
        ? h(
            "tr",
            { class: "empty" },
            h(
              "td",
              { colspan: 6 },
              filtered()
                ? ["No runs match this filter. ", h("button", { type: "button", class: "link", onclick: clearFilters }, "Show all runs")]
                : ["No runs yet. ", h("a", { href: "#/new" }, "Start one.")],
            ),
          )
        : rows.map((run) =>
            h(
              "tr",
              { dataset: { runId: run.runId } },
              // The labels name each value where a phone shows the row as a card.
              // The session's title where this run's turn made it; the task itself shows on hover and on the run's page.
              h("td", { class: "task" }, h("a", { href: `#/runs/${enc(run.runId)}`, title: run.input }, run.title ?? run.input)),
              h("td", { dataset: { label: "Status" } }, h("span", { class: `badge ${run.status}` }, run.status.replace("_", " "))),
              h("td", { dataset: { label: "Mode" } }, run.mode ?? run.requestedMode),
              h("td", { dataset: { label: "Age" } }, h("time", { datetime: run.createdAt, title: run.createdAt }, timeAgo(run.createdAt))),
              h(
                "td",
                {
                  class: "num",
                  dataset: { label: "Est. cost" },
                  title: run.estimatedCostUsd === undefined ? "No price for this model" : "An estimate from the model's price per token",
                },
                usd(run.estimatedCostUsd),
              ),
              h("td", { dataset: { label: "Session" } }, h("code", {}, run.sessionId)),
            ),
          ),
    );
  const load = async (reset: boolean) => {
    try {
      const page = await client.listRuns({
        limit: 20,
        status: status.value,
        sessionId: session.value.trim(),
        cursor: (reset ? null : cursor) ?? undefined,
      });
      if (reset) {
        // A refresh replaces the newest page and keeps the older pages already loaded.
        const first = rows.length === 0;
        rows = refreshed(rows, page.runs, (r) => r.runId);
        if (first) cursor = page.nextCursor;
      } else {
        rows = [...rows, ...page.runs];
        cursor = page.nextCursor;
      }
      more.hidden = cursor === null;
      error.hidden = true;
      draw();
    } catch (err) {
      error.textContent = (err as Error).message;
      error.hidden = false;
    }
  };
  const filtered = () => status.value !== "" || session.value.trim() !== "";
  const clearFilters = () => {
    status.value = "";
    session.value = "";
    refilter();
  };
  const refilter = () => {
    rows = [];
    cursor = null;
    void load(true);
  };
  status.addEventListener("change", refilter);
  session.addEventListener("change", refilter);
  more.addEventListener("click", () => load(false));

  render(
    app,
    h("div", { class: "row spread" }, h("h1", {}, "Runs"), h("a", { class: "button", href: "#/new" }, "New run")),
    h(
      "form",
      {
        class: "filters",
        role: "search",
        onsubmit: (e: Event) => {
          e.preventDefault();
          return refilter();
        },
      },
      field("Status", status),
      field("Session", session),
    ),
    error,
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { "aria-label": "Runs", class: "runs" },
        h("thead", {}, h("tr", {}, ...["Task", "Status", "Mode", "Age", "Est. cost", "Session"].map((c) => h("th", { scope: "col" }, c)))),
        body,
      ),
    ),
    more,
  );
  void load(true);
  const timer = window.setInterval(() => load(true), 3000);
  return () => clearInterval(timer);
}
