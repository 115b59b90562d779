import type { ResolveInterruptRequest } from "../../../../shared/contracts/interrupts.js";
import type { InterruptView, ToolList } from "../../../../shared/contracts/responses.js";
import { type ArgumentView, argumentViews, parseEdited } from "../../../display/toolArguments.js";
import { client } from "../api.js";
import { announce, field, h, render } from "../dom.js";
import { highlightHtml } from "../highlight.js";

/**
 * A card per pending interrupt: Approve / Reject (with a message) / Edit the arguments (checked
 * against the tool's schema) for tools, Approve / Reject for plans, an answer for ask_user, and for
 * a failed tool call its error with Retry / Edit / Skip (with a message) / Fail, and for a run at
 * its budget Extend (by tokens and/or USD; none: as much again) / End with a summary.
 */
export type ToolInfo = ToolList["tools"][number];

export function approvalCard(runId: string, interrupt: InterruptView, tools: () => Promise<ToolInfo[]>, onDone: () => void): HTMLElement {
  const error = h("p", { class: "error", role: "alert", hidden: true });
  const message = h("input", {
    type: "text",
    name: "message",
    placeholder:
      interrupt.kind === "tool_failure"
        ? "for Skip: what the agent reads instead; for Fail: why"
        : "optional for Approve; the reason for Reject",
  });
  const buttons: HTMLButtonElement[] = [];
  const decide = async (body: ResolveInterruptRequest) => {
    for (const b of buttons) b.disabled = true;
    error.hidden = true;
    try {
      await client.resolveInterrupt(runId, interrupt.interruptId, body);
      announce(`Decision sent: ${body.decision}.`);
      onDone();
    } catch (err) {
      error.textContent = (err as Error).message;
      error.hidden = false;
      for (const b of buttons) b.disabled = false;
    }
  };
  const button = (label: string, onclick: () => void, cls = "") => {
    const b = h("button", { type: "button", class: cls, onclick }, label);
    buttons.push(b);
    return b;
  };
  const withMessage = (decision: ResolveInterruptRequest["decision"]) => ({
    decision,
    ...(message.value.trim() ? { message: message.value.trim() } : {}),
  });
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
      h(
        "div",
        { class: "row" },
        button(
          "Answer",
          () => (answer.value.trim() ? decide({ decision: "answer", message: answer.value.trim() }) : answer.focus()),
          "primary",
        ),
      ),
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
      h(
        "div",
        { class: "row" },
        button("Approve", () => decide(withMessage("approve")), "primary"),
        button("Reject", () => decide(withMessage("reject")), "danger"),
      ),
    );
  }

  if (interrupt.kind === "budget") {
    const tokens = h("input", { type: "number", name: "tokens", min: "1", step: "1", inputmode: "numeric" });
    const costUsd = h("input", { type: "number", name: "costUsd", min: "0", step: "any", inputmode: "decimal" });
    const extension = () => ({
      ...(tokens.value ? { tokens: Number(tokens.value) } : {}),
      ...(costUsd.value ? { costUsd: Number(costUsd.value) } : {}),
    });
    return h(
      "article",
      { class: "card interrupt", "aria-labelledby": headingId, dataset: { interruptId: interrupt.interruptId } },
      h("h3", { id: headingId }, "The run is at its budget"),
      h("p", { class: "summary" }, interrupt.summary),
      field("Tokens to add (empty: as much again)", tokens),
      field("USD to add", costUsd),
      error,
      h(
        "div",
        { class: "row" },
        // A bad amount (zero, negative) is refused by the API with the reason, shown in the card.
        button("Extend", () => decide({ decision: "approve", arguments: extension() }), "primary"),
        button("End with a summary", () => decide({ decision: "reject" }), "danger"),
      ),
    );
  }

  return toolApprovalCard(interrupt, headingId, tools, { message, error, button, withMessage, decide });
}

interface CardParts {
  message: HTMLInputElement;
  error: HTMLElement;
  button: (label: string, onclick: () => void, cls?: string) => HTMLButtonElement;
  withMessage: (decision: ResolveInterruptRequest["decision"]) => ResolveInterruptRequest;
  decide: (body: ResolveInterruptRequest) => Promise<void>;
}

/**
 * A tool call to approve: each argument shown as what it is (code highlighted, text wrapped, JSON
 * pretty-printed). Edit opens one field per argument with its value as is, not an escaped string.
 */
function toolApprovalCard(interrupt: InterruptView, headingId: string, tools: () => Promise<ToolInfo[]>, parts: CardParts): HTMLElement {
  const { message, error, button, withMessage, decide } = parts;
  const shown = h("div", { class: "arguments" });
  const editor = h("div", { class: "editor", hidden: true });
  const fields: { view: ArgumentView; control: HTMLTextAreaElement; problem: HTMLElement }[] = [];
  let views = argumentViews(interrupt.arguments);
  const draw = () => {
    render(
      shown,
      views.map((view) =>
        h(
          "div",
          { class: "argument" },
          h("h4", {}, view.name, view.kind === "code" && view.language ? h("small", { class: "muted" }, ` ${view.language}`) : null),
          argumentBody(view),
        ),
      ),
    );
    fields.length = 0;
    for (const view of views) {
      const lines = view.text.split("\n").length;
      const control = h("textarea", {
        name: view.name,
        rows: Math.min(Math.max(lines, view.kind === "text" ? 2 : 1), 24),
        spellcheck: view.kind === "text" ? "true" : "false",
        class: view.kind === "text" ? "" : "mono",
        value: view.text,
      });
      const problem = h("p", { class: "field-error", id: `${headingId}-${view.name}-error`, role: "alert", hidden: true });
      fields.push({ view, control, problem });
    }
    render(
      editor,
      fields.map(({ view, control, problem }) => {
        const box = field(view.name, control, view.kind === "json" ? "JSON" : undefined);
        box.append(problem);
        return box;
      }),
    );
  };
  /** Approve while editing: the edited arguments, checked first; a problem is shown at its field. */
  const sendEdited = async () => {
    for (const f of fields) showProblem(f, undefined);
    const edited: Record<string, unknown> = {};
    for (const f of fields) {
      const parsed = parseEdited(f.view, f.control.value);
      if ("error" in parsed) return showProblem(f, parsed.error);
      edited[f.view.name] = parsed.value;
    }
    const problem = await checkArguments(edited, interrupt.toolName, tools);
    if (problem) {
      const at = fields.find((f) => problem.includes(`'${f.view.name}'`));
      if (at) return showProblem(at, problem);
      error.textContent = problem;
      error.hidden = false;
      return;
    }
    await decide({ ...withMessage("edit"), arguments: edited });
  };
  const showProblem = (f: (typeof fields)[number], problem: string | undefined) => {
    f.problem.textContent = problem ?? "";
    f.problem.hidden = !problem;
    if (problem) {
      f.control.setAttribute("aria-invalid", "true");
      f.control.setAttribute("aria-describedby", f.problem.id);
      f.control.focus();
    } else f.control.removeAttribute("aria-invalid");
  };
  // A failed call (tool_failure) is run again rather than approved; Skip and Fail take the place of Reject.
  const failure = interrupt.kind === "tool_failure" ? interrupt.failure : undefined;
  const runLabel = failure ? "Retry" : "Approve";
  // One primary action: Approve (Retry) runs the call as shown, or, while editing, with the edited arguments.
  const approve = button(runLabel, () => (editor.hidden ? decide(withMessage(failure ? "retry" : "approve")) : sendEdited()), "primary");
  const edit = button("Edit", () => {
    editor.hidden = !editor.hidden;
    shown.hidden = !editor.hidden;
    edit.setAttribute("aria-expanded", String(!editor.hidden));
    edit.textContent = editor.hidden ? "Edit" : "Cancel edit";
    approve.textContent = editor.hidden ? runLabel : `${runLabel} with these arguments`;
    if (!editor.hidden) fields[0]?.control.focus();
  });
  edit.setAttribute("aria-expanded", "false");
  draw();
  // The tool's description names the language of its code (run_code: Python), once the list is here.
  void tools().then(
    (list) => {
      const description = list.find((t) => t.name === interrupt.toolName)?.description;
      if (description && editor.hidden) {
        views = argumentViews(interrupt.arguments, description);
        draw();
      }
    },
    () => undefined,
  );
  return h(
    "article",
    { class: "card interrupt", "aria-labelledby": headingId, dataset: { interruptId: interrupt.interruptId } },
    h(
      "h3",
      { id: headingId },
      failure
        ? `${interrupt.toolName ?? "A tool"} ${failure.reason === "in_doubt" ? "may or may not have run" : "failed"}`
        : `Allow ${interrupt.toolName ?? "this tool"}?`,
    ),
    failure ? h("p", { class: "error tool-failure" }, failure.error) : null,
    shown,
    editor,
    field("Message", message),
    error,
    h(
      "div",
      { class: "row" },
      approve,
      ...(failure
        ? [button("Skip", () => decide(withMessage("skip"))), edit, button("Fail", () => decide(withMessage("fail")), "danger")]
        : [button("Reject", () => decide(withMessage("reject")), "danger"), edit]),
    ),
  );
}

/** One argument's value as what it is. Highlighted HTML comes from highlight.js, which escapes the code. */
export function argumentBody(view: ArgumentView): HTMLElement {
  if (view.kind === "text") return h("p", { class: "text-arg" }, view.text);
  const code = h("code", { class: view.kind === "code" && view.language ? `hljs language-${view.language}` : "hljs" });
  const html = highlightHtml(view.text, view.kind === "json" ? "json" : view.language);
  if (html === undefined) code.textContent = view.text;
  else code.innerHTML = html;
  return h("pre", { class: `code-arg ${view.kind}` }, code);
}

/** What is wrong with edited arguments, checked against the tool's JSON schema (the API checks again). */
async function checkArguments(
  value: Record<string, unknown>,
  toolName: string | undefined,
  tools: () => Promise<ToolInfo[]>,
): Promise<string | undefined> {
  const tool = (await tools().catch(() => [])).find((t) => t.name === toolName);
  if (!tool) return undefined;
  // The parts of the tool's JSON schema checked here.
  const schema = tool.parameters as { properties?: Record<string, { type?: string | string[] }>; required?: string[] };
  for (const name of schema.required ?? []) if (!(name in value)) return `'${name}' is required by ${tool.name}.`;
  for (const [name, v] of Object.entries(value)) {
    const spec = schema.properties?.[name];
    if (!spec) return `${tool.name} has no argument '${name}'.`;
    const types = ([] as string[]).concat(spec.type ?? []);
    const actual = Array.isArray(v) ? "array" : v === null ? "null" : Number.isInteger(v) ? "integer" : typeof v;
    if (types.length && !types.includes(actual) && !(actual === "integer" && types.includes("number")))
      return `'${name}' must be ${types.join(" or ")}, not ${actual}.`;
  }
  return undefined;
}
