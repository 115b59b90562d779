import type { ToolPolicy } from "../../../../shared/contracts/policies.js";
import { client } from "../api.js";
import { announce, field, h, render } from "../dom.js";

/** An example a tenant edits: no file over 1,000 characters, watched in log_only first. */
const EXAMPLE = `@reason("Artifacts may have at most 1,000 characters.")
forbid(principal, action == Action::"write_artifact", resource)
when { context.sizes.content > 1000 };`;

/**
 * The tenant's tool policies (Cedar forbid statements, docs/policies.md): the ones in force with
 * their mode and text, and a form that saves a new version (a policy Cedar refuses shows its reason
 * and nothing is saved). Editing one fills the form with it.
 */
export function policiesPage(app: HTMLElement) {
  const list = h("div", {}, h("p", {}, "Loading…"));
  const name = h("input", { type: "text", name: "policyName", required: true, pattern: "[a-z][a-z0-9_-]{0,63}" });
  const mode = h(
    "select",
    { name: "policyMode" },
    h("option", { value: "log_only" }, "log_only"),
    h("option", { value: "enforce" }, "enforce"),
  );
  const cedar = h("textarea", { name: "policyCedar", rows: 8, required: true, spellcheck: false });
  cedar.value = EXAMPLE;
  const saveError = h("p", { class: "error", role: "alert", hidden: true });

  const refresh = async () => {
    const { policies } = await client.listPolicies();
    render(
      list,
      policies.length === 0
        ? h("p", {}, "No policies: every tool call is allowed.")
        : h(
            "table",
            {},
            h(
              "thead",
              {},
              h("tr", {}, h("th", {}, "Policy"), h("th", {}, "Version"), h("th", {}, "Mode"), h("th", {}, "Cedar"), h("th", {}, "")),
            ),
            h("tbody", {}, policies.map(row)),
          ),
    );
  };
  const row = (policy: ToolPolicy) =>
    h(
      "tr",
      {},
      h("td", {}, policy.name, policy.description ? h("small", { class: "hint" }, ` ${policy.description}`) : null),
      h("td", {}, String(policy.version)),
      h("td", {}, policy.mode),
      h("td", {}, h("pre", {}, policy.cedar)),
      h(
        "td",
        {},
        h(
          "button",
          {
            type: "button",
            class: "link",
            onclick: () => {
              name.value = policy.name;
              mode.value = policy.mode;
              cedar.value = policy.cedar;
              cedar.focus();
            },
          },
          `Edit ${policy.name}`,
        ),
        " ",
        h(
          "button",
          {
            type: "button",
            class: "link",
            onclick: async () => {
              await client.deletePolicy(policy.name);
              announce(`Deleted ${policy.name}.`);
              await refresh();
            },
          },
          `Delete ${policy.name}`,
        ),
      ),
    );

  render(
    app,
    h("h1", {}, "Tool policies"),
    h("section", { class: "card" }, h("h2", {}, "In force"), list),
    h(
      "form",
      {
        class: "card",
        onsubmit: async (e: Event) => {
          e.preventDefault();
          saveError.hidden = true;
          try {
            const saved = await client.savePolicy(name.value, { cedar: cedar.value, mode: mode.value as ToolPolicy["mode"] });
            announce(`Saved ${saved.name} version ${saved.version} (${saved.mode}).`);
            await refresh();
          } catch (err) {
            saveError.textContent = (err as Error).message;
            saveError.hidden = false;
          }
        },
      },
      h("h2", {}, "Save a policy (a new version)"),
      field("Name", name),
      field("Mode", mode, "log_only: calls run and a guardrail.decided event says what would have happened; enforce: the decision holds."),
      field("Cedar", cedar, "forbid statements; @approval asks a person instead of denying, @reason says why."),
      saveError,
      h("button", { type: "submit" }, "Save policy"),
    ),
  );
  void refresh().catch((err) => render(list, h("p", { class: "error" }, (err as Error).message)));
}
