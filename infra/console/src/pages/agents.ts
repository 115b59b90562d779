import type { SavedAgent } from "../../../../shared/contracts/agents.js";
import { client } from "../api.js";
import { announce, field, h, render } from "../dom.js";

/**
 * The tenant's instructions (every agent of its runs follows them) and its saved agents: each save
 * a new version, deleting removes them all (runs already submitted keep what they named).
 */
export function agentsPage(app: HTMLElement) {
  const instructions = h("textarea", { name: "tenantInstructions", rows: 4, maxlength: 4000 });
  const instructionsError = h("p", { class: "error", role: "alert", hidden: true });
  const list = h("div", {}, h("p", {}, "Loading…"));
  const name = h("input", { type: "text", name: "agentName", required: true, pattern: "[a-z][a-z0-9_-]{0,47}" });
  const config = h("textarea", { name: "agentConfig", rows: 8, required: true });
  config.value = JSON.stringify({ description: "", mode: "react", instructions: "", tools: ["calculator", "ask_user"] }, null, 2);
  const saveError = h("p", { class: "error", role: "alert", hidden: true });

  const show = (error: HTMLElement, err: unknown) => {
    error.textContent = (err as Error).message;
    error.hidden = false;
  };
  const refresh = async () => {
    const { agents } = await client.listAgents();
    render(
      list,
      agents.length === 0
        ? h("p", {}, "No saved agents yet.")
        : h(
            "table",
            {},
            h(
              "thead",
              {},
              h("tr", {}, h("th", {}, "Agent"), h("th", {}, "Version"), h("th", {}, "Mode"), h("th", {}, "Tools"), h("th", {}, "")),
            ),
            h("tbody", {}, agents.map(row)),
          ),
    );
  };
  const row = (agent: SavedAgent) =>
    h(
      "tr",
      {},
      h("td", {}, agent.name, agent.description ? h("small", { class: "hint" }, ` ${agent.description}`) : null),
      h("td", {}, String(agent.version)),
      h("td", {}, agent.mode ?? "auto"),
      h("td", {}, agent.tools ? agent.tools.join(", ") : "all"),
      h(
        "td",
        {},
        h(
          "button",
          {
            type: "button",
            class: "link",
            onclick: async () => {
              await client.deleteAgent(agent.name);
              announce(`Deleted ${agent.name}.`);
              await refresh();
            },
          },
          `Delete ${agent.name}`,
        ),
      ),
    );

  render(
    app,
    h("h1", {}, "Agents"),
    h(
      "form",
      {
        class: "card",
        onsubmit: async (e: Event) => {
          e.preventDefault();
          instructionsError.hidden = true;
          try {
            await client.putSettings({ instructions: instructions.value });
            announce("The tenant's instructions are saved.");
          } catch (err) {
            show(instructionsError, err);
          }
        },
      },
      h("h2", {}, "Instructions for every run"),
      field(
        "Tenant instructions",
        instructions,
        "House rules, the answer's language, an SOP: in every agent's prompt. Empty removes them.",
      ),
      instructionsError,
      h("button", { type: "submit" }, "Save instructions"),
    ),
    h("section", { class: "card" }, h("h2", {}, "Saved agents"), list),
    h(
      "form",
      {
        class: "card",
        onsubmit: async (e: Event) => {
          e.preventDefault();
          saveError.hidden = true;
          try {
            const saved = await client.saveAgent(name.value, JSON.parse(config.value));
            announce(`Saved ${saved.name} version ${saved.version}.`);
            await refresh();
          } catch (err) {
            show(saveError, err);
          }
        },
      },
      h("h2", {}, "Save an agent (a new version)"),
      field("Name", name),
      field(
        "Configuration (JSON)",
        config,
        "mode, instructions, tools (from the tool catalogue), roles (model settings per role), approval, description.",
      ),
      saveError,
      h("button", { type: "submit" }, "Save agent"),
    ),
  );
  // The saved instructions fill the field unless the person has already typed in it (the load may come later).
  void client.getSettings().then((s) => {
    if (instructions.value === "") instructions.value = s.instructions ?? "";
  });
  void refresh().catch((err) => render(list, h("p", { class: "error" }, (err as Error).message)));
}
