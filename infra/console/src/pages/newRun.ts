import type { CreateRunBody } from "../../../../shared/apiClient/client.js";
import { client, enc } from "../api.js";
import { announce, field, h, render } from "../dom.js";

/** Submit a task: input, mode, deep think, approvals, session, files to attach (uploaded first, then named by the run). */
export function newRunPage(app: HTMLElement) {
  const input = h("textarea", { name: "input", rows: 5, required: true, maxlength: 96000 });
  const mode = h(
    "select",
    { name: "mode" },
    // Short names, explained in the hint: on a phone a long option is cut in the closed select.
    h("option", { value: "auto" }, "auto"),
    h("option", { value: "react" }, "react"),
    h("option", { value: "plan_solve" }, "plan_solve"),
  );
  const deepThink = h("input", { type: "checkbox", name: "deepThink" });
  const approvePlan = h("input", { type: "checkbox", name: "approvePlan" });
  const tools = h(
    "select",
    { name: "tools" },
    h("option", { value: "none" }, "none"),
    h("option", { value: "write" }, "write tools"),
    h("option", { value: "all" }, "all tools"),
  );
  const session = h("input", { type: "text", name: "sessionId", placeholder: "a new session", pattern: "[A-Za-z0-9_-]{1,64}" });
  const attach = h("input", { type: "file", name: "files", multiple: true });
  // The tenant's saved agents, filled in when the list comes back.
  // Each choice by its name alone (its version and mode in the hint): on a phone a longer option is cut in the closed select.
  const agent = h("select", { name: "agent" }, h("option", { value: "" }, "none"));
  const agentHint = h("span", {});
  const versions = new Map<string, string>();
  const describeAgent = () => {
    agentHint.textContent = agent.value ? `${agent.value}: ${versions.get(agent.value) ?? ""}` : "none: the whole catalogue. ";
  };
  agent.addEventListener("change", describeAgent);
  describeAgent();
  void client
    .listAgents()
    .then(({ agents }) => {
      for (const a of agents) {
        versions.set(a.name, `version ${a.version}${a.mode ? `, ${a.mode}` : ""}. `);
        agent.append(h("option", { value: a.name }, a.name));
      }
    })
    .catch(() => undefined);
  const instructions = h("textarea", { name: "instructions", rows: 3, maxlength: 4000 });
  // Offered when the session named has a run in flight: what this run does about it.
  const multitask = h(
    "select",
    { name: "multitask" },
    h("option", { value: "reject" }, "reject"),
    h("option", { value: "enqueue" }, "enqueue"),
    h("option", { value: "interrupt" }, "interrupt"),
    h("option", { value: "rollback" }, "rollback"),
  );
  const busyNote = h("span", {});
  const busy = h(
    "div",
    { hidden: true },
    field(
      "A run is in flight there; this run should",
      multitask,
      "reject: not be sent. enqueue: run after the run in flight. interrupt: stop the run in flight at its next safe point, keeping what it did, then run. rollback: cancel the run in flight and forget its turn, then run.",
    ),
    busyNote,
  );
  session.addEventListener("change", async () => {
    const id = session.value.trim();
    const found = id && session.checkValidity() ? await client.getSession(id).catch(() => undefined) : undefined;
    busy.hidden = !found?.activeRunId;
    busyNote.textContent = found?.activeRunId ? `Run ${found.activeRunId} is in flight in this session.` : "";
  });
  const error = h("p", { class: "error", role: "alert", hidden: true });
  const submit = h("button", { type: "submit" }, "Submit");
  /** The control's id (given one if it has none), for its label to point at. */
  const idOf = (control: HTMLInputElement, label: string) => {
    control.id ||= `c${label.length}${Math.random().toString(36).slice(2, 6)}`;
    return control.id;
  };
  const checkbox = (label: string, control: HTMLInputElement) =>
    h("div", { class: "field check" }, control, h("label", { for: idOf(control, label) }, label));

  render(
    app,
    h("h1", {}, "New run"),
    h(
      "form",
      {
        class: "card",
        onsubmit: async (e: Event) => {
          e.preventDefault();
          submit.disabled = true;
          error.hidden = true;
          try {
            const files: string[] = [];
            for (const file of attach.files ?? []) {
              announce(`Uploading ${file.name}…`);
              const uploaded = await client.uploadFile(file.name, file, file.type).catch((err: Error) => {
                throw new Error(`${file.name} could not be uploaded: ${err.message}`);
              });
              files.push(uploaded.fileId);
            }
            const run = await client.createRun({
              input: input.value,
              mode: mode.value as CreateRunBody["mode"],
              ...(deepThink.checked ? { deepThink: true } : {}),
              approval: { plan: approvePlan.checked, tools: tools.value as "none" | "write" | "all" },
              ...(session.value.trim() ? { sessionId: session.value.trim() } : {}),
              ...(session.value.trim() && !busy.hidden ? { multitask: multitask.value as CreateRunBody["multitask"] } : {}),
              ...(files.length ? { files } : {}),
              ...(agent.value ? { agent: agent.value } : {}),
              ...(instructions.value.trim() ? { instructions: instructions.value } : {}),
            });
            location.hash = `#/runs/${enc(run.runId)}`;
          } catch (err) {
            error.textContent = (err as Error).message;
            error.hidden = false;
          } finally {
            submit.disabled = false;
          }
        },
      },
      field("Task", input, "What should the agents do? Up to 96,000 bytes (32,000 characters of Chinese, Japanese or Korean)."),
      field("Mode", mode, "auto: the router decides. react: one agent. plan_solve: a planner and parallel executors."),
      field("Saved agent", agent, [
        agentHint,
        "A saved agent brings its mode (when Mode is auto), instructions, model settings, tools and approvals (Agents page).",
      ]),
      field("Instructions", instructions, "For this run's agents, after the tenant's and the saved agent's. Up to 4,000 characters."),
      checkbox("Deep think (plan and solve when the router decides)", deepThink),
      h(
        "fieldset",
        {},
        h("legend", {}, "Approvals"),
        checkbox("Approve the plan before it runs", approvePlan),
        field("Approve tool calls", tools),
      ),
      field("Session", session, "Continue a conversation: runs in one session share their turns."),
      busy,
      field(
        "Files to attach",
        attach,
        "Uploaded when you submit (POST /v1/files); the agents can read them, and they are listed with the run's files.",
      ),
      error,
      submit,
    ),
  );
  input.focus();
}
