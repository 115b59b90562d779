import { timeAgo } from "../../../../shared/apiClient/timeAgo.js";
import type { SessionList } from "../../../../shared/contracts/responses.js";
import { client, enc } from "../api.js";
import { h, render } from "../dom.js";
import { refreshed } from "../listing.js";

type SessionRow = SessionList["sessions"][number];

/** The tenant's sessions, newest first, each by its title (made after its first answered turn), refreshed every few seconds. */
export function sessionsPage(app: HTMLElement) {
  const body = h("tbody");
  const error = h("p", { class: "error", role: "alert", hidden: true });
  const more = h("button", { type: "button", hidden: true }, "Load more");
  let cursor: string | null = null;
  let rows: SessionRow[] = [];

  const draw = () =>
    render(
      body,
      rows.length === 0
        ? h("tr", { class: "empty" }, h("td", { colspan: 4 }, ["No sessions yet. ", h("a", { href: "#/new" }, "Start a run.")]))
        : rows.map((session) =>
            h(
              "tr",
              { dataset: { sessionId: session.sessionId } },
              // Untitled until its first turn is answered and titled: the id stands in.
              h(
                "td",
                { class: "task" },
                h(
                  "a",
                  { href: `#/runs?sessionId=${enc(session.sessionId)}` },
                  session.title ?? h("span", { class: "muted" }, `Untitled (${session.sessionId})`),
                ),
              ),
              h(
                "td",
                { dataset: { label: "Updated" } },
                h("time", { datetime: session.updatedAt, title: session.updatedAt }, timeAgo(session.updatedAt)),
              ),
              h(
                "td",
                { dataset: { label: "Last run" } },
                h("a", { href: `#/runs/${enc(session.lastRunId)}` }, h("code", {}, session.lastRunId)),
              ),
              h("td", { dataset: { label: "Session" } }, h("code", {}, session.sessionId)),
            ),
          ),
    );
  const load = async (reset: boolean) => {
    try {
      const page = await client.listSessions({ limit: 20, cursor: (reset ? null : cursor) ?? undefined });
      // The first load and "Load more" move the cursor; a refresh (titles arrive after a turn) keeps it.
      if (!reset || rows.length === 0) cursor = page.nextCursor;
      rows = reset ? refreshed(rows, page.sessions, (s) => s.sessionId) : [...rows, ...page.sessions];
      more.hidden = cursor === null;
      error.hidden = true;
      draw();
    } catch (err) {
      error.textContent = (err as Error).message;
      error.hidden = false;
    }
  };
  more.addEventListener("click", () => load(false));

  render(
    app,
    h("div", { class: "row spread" }, h("h1", {}, "Sessions"), h("a", { class: "button", href: "#/new" }, "New run")),
    error,
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { "aria-label": "Sessions", class: "runs sessions" },
        h("thead", {}, h("tr", {}, ...["Title", "Updated", "Last run", "Session"].map((c) => h("th", { scope: "col" }, c)))),
        body,
      ),
    ),
    more,
  );
  void load(true);
  const timer = window.setInterval(() => load(true), 3000);
  return () => clearInterval(timer);
}
