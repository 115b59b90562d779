import { apiKey } from "./api.js";
import { h, render } from "./dom.js";
import { agentsPage } from "./pages/agents.js";
import { newRunPage } from "./pages/newRun.js";
import { policiesPage } from "./pages/policies.js";
import { runPage } from "./pages/run.js";
import { runsPage } from "./pages/runs.js";
import { sessionsPage } from "./pages/sessions.js";
import { signInPage } from "./pages/signIn.js";

/** Hash routes, so the API serves one page at `/`: #/signin, #/runs, #/new, #/sessions, #/agents, #/policies, #/runs/<runId>. */
export type Cleanup = () => void;
let cleanup: Cleanup | undefined;

function route() {
  cleanup?.();
  cleanup = undefined;
  const app = elementById("app");
  const nav = elementById("nav");
  const path = location.hash.replace(/^#/, "") || "/runs";
  const signedIn = apiKey.get() !== null;
  render(
    nav,
    signedIn
      ? [
          h("a", { href: "#/runs" }, "Runs"),
          h("a", { href: "#/new" }, "New run"),
          h("a", { href: "#/sessions" }, "Sessions"),
          h("a", { href: "#/agents" }, "Agents"),
          h("a", { href: "#/policies" }, "Policies"),
          h(
            "button",
            {
              type: "button",
              class: "link",
              onclick: () => {
                apiKey.clear();
                location.hash = "#/signin";
              },
            },
            "Sign out",
          ),
        ]
      : null,
  );
  if (!signedIn || path === "/signin") {
    document.title = "Sign in · Stepwise";
    signInPage(app);
    return;
  }
  const runId = /^\/runs\/([A-Za-z0-9_-]+)$/.exec(path)?.[1];
  if (runId) cleanup = runPage(app, runId);
  else if (path === "/new") newRunPage(app);
  else if (path === "/agents") agentsPage(app);
  else if (path === "/policies") policiesPage(app);
  else if (path === "/sessions") cleanup = sessionsPage(app);
  else cleanup = runsPage(app);
  app.focus({ preventScroll: true });
}

window.addEventListener("hashchange", route);
route();

/** An element index.html always has. */
function elementById(id: string): HTMLElement {
  const found = document.getElementById(id);
  if (!found) throw new Error(`The page has no #${id} element.`);
  return found;
}
