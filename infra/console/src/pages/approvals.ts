import { api, ApiError, enc, type Interrupt, type ToolInfo } from "../api.js";
import { announce, field, h } from "../dom.js";

/**
 * A card per pending interrupt: Approve / Reject (with a message) / Edit the arguments (JSON checked
 * against the tool's schema) for tools, Approve / Reject for plans, an answer for ask_user.
 */
export function approvalCard(runId: string, interrupt: Interrupt, tools: () => Promise<ToolInfo[]>, onDone: () => void): HTMLElement {
  const error = h("p", { class: "error", role: "alert", hidden: true });
  const message = h("input", { type: "text", name: "message", placeholder: "optional for Approve; the reason for Reject" });
  const buttons: HTMLButtonElement[] = [];
  const decide = async (body: Record<string, unknown>) => {
    buttons.forEach((b) => (b.disabled = true));
    error.hidden = true;
    try {
      await api("POST", `/v1/runs/${enc(runId)}/interrupts/${enc(interrupt.interruptId)}`, body);
      announce(`Decision sent: ${body.decision}.`);
      onDone();
    } catch (err) {
      error.textContent = err instanceof ApiError ? err.message : String(err);
      error.hidden = false;
      buttons.forEach((b) => (b.disabled = false));
    }
  };
  const button = (label: string, onclick: () => void, cls = "") => {
    const b = h("button", { type: "button", class: cls, onclick }, label);
    buttons.push(b);
    return b;
  };
  const withMessage = (decision: string) => ({ decision, ...(message.value.trim() ? { message: message.value.trim() } : {}) });
  const headingId = `int-${interrupt.interruptId}`;

  if (interrupt.kind === "ask_user") {
    const answer = h("textarea", { name: "answer", rows: 3, required: true });
    return h(
      "article",
      { class: "card interrupt", "aria-labelledby": headingId, dataset: { interruptId: interrupt.interruptId } },
      h("h3", { id: headingId }, "The agent asks"),
      h("p", { class: "question" }, interrupt.question ?? interrupt.summary),
      field("Answer", answer),
      error,
      h("div", { class: "row" }, button("Answer", () => (answer.value.trim() ? decide({ decision: "answer", message: answer.value.trim() }) : answer.focus()), "primary")),
    );
  }

  if (interrupt.kind === "plan_approval") {
    return h(
      "article",
      { class: "card interrupt", "aria-labelledby": headingId, dataset: { interruptId: interrupt.interruptId } },
      h("h3", { id: headingId }, "Approve the plan?"),
      h("pre", { class: "summary" }, interrupt.summary),
      field("Message", message),
      error,
      h("div", { class: "row" }, button("Approve", () => decide(withMessage("approve")), "primary"), button("Reject", () => decide(withMessage("reject")), "danger")),
    );
  }

  const args = h("textarea", { name: "arguments", rows: 6, spellcheck: "false", class: "mono", value: JSON.stringify(interrupt.arguments ?? {}, null, 2) });
  return h(
    "article",
    { class: "card interrupt", "aria-labelledby": headingId, dataset: { interruptId: interrupt.interruptId } },
    h("h3", { id: headingId }, `Allow ${interrupt.toolName ?? "this tool"}?`),
    h("p", {}, interrupt.summary),
    field("Arguments (JSON)", args, "Change them and press Edit to run the tool with your arguments."),
    field("Message", message),
    error,
    h(
      "div",
      { class: "row" },
      button("Approve", () => decide(withMessage("approve")), "primary"),
      button("Reject", () => decide(withMessage("reject")), "danger"),
      button("Edit", async () => {
        const problem = await checkArguments(args.value, interrupt.toolName, tools);
        if (problem) {
          error.textContent = problem;
          error.hidden = false;
          args.focus();
          return;
        }
        await decide({ ...withMessage("edit"), arguments: JSON.parse(args.value) });
      }),
    ),
  );
}

/** What is wrong with edited arguments, checked against the tool's JSON schema (the API checks again). */
async function checkArguments(text: string, toolName: string | undefined, tools: () => Promise<ToolInfo[]>): Promise<string | undefined> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return `The arguments are not valid JSON: ${(err as Error).message}`;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "The arguments must be a JSON object.";
  const tool = (await tools().catch(() => [])).find((t) => t.name === toolName);
  if (!tool) return undefined;
  const record = value as Record<string, unknown>;
  for (const name of tool.parameters.required ?? []) if (!(name in record)) return `'${name}' is required by ${tool.name}.`;
  for (const [name, v] of Object.entries(record)) {
    const spec = tool.parameters.properties?.[name];
    if (!spec) return `${tool.name} has no argument '${name}'.`;
    const types = ([] as string[]).concat(spec.type ?? []);
    const actual = Array.isArray(v) ? "array" : v === null ? "null" : Number.isInteger(v) ? "integer" : typeof v;
    if (types.length && !types.includes(actual) && !(actual === "integer" && types.includes("number"))) return `'${name}' must be ${types.join(" or ")}, not ${actual}.`;
  }
  return undefined;
}
