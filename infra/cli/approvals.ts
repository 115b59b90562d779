/**
 * A person's decisions on a run's interrupts (plan approval, tool approval, questions): automatic
 * with --yes, asked on the terminal (or, for questions, read from a pipe), or left to curl when
 * nobody here can answer.
 */

import type { StepwiseClient } from "../../shared/apiClient/client.js";
import { ApiError } from "../../shared/apiClient/errors.js";
import type { RunEvent } from "../../shared/contracts/events.js";
import type { ResolveInterruptRequest } from "../../shared/contracts/interrupts.js";
import { TERMINAL_EVENTS } from "../../shared/contracts/terminal.js";
import { argumentViews } from "../display/toolArguments.js";
import { editInEditor, parseEditableText } from "./argumentEditor.js";
import type { EventQueue } from "./eventQueue.js";
import { LinePrompter, type Prompter, TtyPrompter } from "./prompters.js";
import { type Palette, palette, type Renderer, useColor } from "./render.js";

export type OpenedInterrupt = Extract<RunEvent, { type: "interrupt.opened" }>["data"];

/** What deciding needs from the Session that follows the run. */
export interface DecisionContext {
  client: StepwiseClient;
  runId: string;
  stdin: NodeJS.ReadStream;
  env: NodeJS.ProcessEnv;
  /** --yes: approve plans and tool calls without asking (questions still need an answer). */
  yes: boolean;
  /** --json: stdout carries the events, so the interrupt is shown with the status lines. */
  json: boolean;
  /** The run's events, to notice a decision made elsewhere or the run ending. */
  queue: EventQueue;
  /** Aborted when the person detaches (Ctrl-C). */
  detach: AbortSignal;
  renderer: Renderer;
  /** Where status lines go. */
  notes: NodeJS.WriteStream;
  /** Where a terminal's prompts go. */
  promptOut: NodeJS.WriteStream;
  /** Ctrl-C typed at a prompt: readline takes it from the process, so it is passed on. */
  onSigint: () => void;
  warn: (text: string) => void;
}

export class Approvals {
  private prompter: Prompter | undefined;
  /** Colours for the status lines. */
  private readonly c: Palette;

  constructor(private readonly ctx: DecisionContext) {
    this.c = ctx.renderer.c;
  }

  /**
   * A person's decision on an interrupt: automatic with --yes, asked on the terminal, or left to
   * curl. Returns early if the person detaches meanwhile; the Session sees that on `detach`.
   */
  async decide(interrupt: OpenedInterrupt): Promise<void> {
    const { ctx, c } = this;
    if (ctx.queue.has((e) => e.type === "interrupt.resolved" && e.data.interruptId === interrupt.interruptId)) return;
    if (!(await this.stillPending(interrupt.interruptId))) return;
    if (ctx.json) ctx.notes.write(`${ctx.renderer.interrupt(interrupt).join("\n")}\n`);

    if (ctx.yes && (interrupt.kind === "plan_approval" || interrupt.kind === "tool_approval")) {
      this.note(c.green("Approved automatically (--yes)."));
      await this.submit(interrupt, { decision: "approve" });
      return;
    }
    const prompter = this.prompterFor(interrupt);
    if (!prompter) {
      this.curlHint(interrupt);
      return;
    }

    // Stop asking if someone else decides meanwhile (another terminal, curl) or the run ends.
    const asking = new AbortController();
    const onDetach = () => asking.abort();
    ctx.detach.addEventListener("abort", onDetach);
    const stopWatching = ctx.queue.watch((e) => {
      if ((e.type === "interrupt.resolved" && e.data.interruptId === interrupt.interruptId) || TERMINAL_EVENTS.has(e.type)) asking.abort();
    });
    try {
      for (;;) {
        const request = await this.ask(interrupt, prompter, asking.signal);
        if (ctx.detach.aborted) return; // detached (Ctrl-C): the Session stops following
        if (asking.signal.aborted) {
          prompter.say(c.dim("(no longer waiting for this decision: it was made elsewhere, or the run ended)"));
          return;
        }
        if (request === undefined) {
          // stdin ended: nobody here can answer
          this.curlHint(interrupt);
          return;
        }
        if (await this.submit(interrupt, request)) return;
      }
    } finally {
      stopWatching();
      ctx.detach.removeEventListener("abort", onDetach);
    }
  }

  /** Lets go of stdin, so it does not keep the process alive. */
  close() {
    this.prompter?.close();
  }

  /** Reads one decision; re-asks on answers it cannot use. undefined: no input, or aborted. */
  private async ask(interrupt: OpenedInterrupt, prompter: Prompter, signal: AbortSignal): Promise<ResolveInterruptRequest | undefined> {
    const c = palette(useColor(prompter.output, this.ctx.env));
    const say = (text: string) => prompter.say(text);
    for (;;) {
      switch (interrupt.kind) {
        case "plan_approval": {
          const answer = await prompter.ask(`${c.bold("Approve this plan?")} [y]es / [n]o (reason): `, signal);
          if (answer === undefined) return undefined;
          const yesNo = parseYesNo(answer);
          if (yesNo) return yesNo;
          say("Type y to approve, or n and a reason to reject (e.g. 'n the second step is not needed').");
          break;
        }
        case "tool_approval": {
          const answer = await prompter.ask(
            `${c.bold(`Approve ${interrupt.toolName ?? "the tool call"}?`)} [y]es / [n]o (reason) / [e]dit (in $EDITOR, or e and JSON): `,
            signal,
          );
          if (answer === undefined) return undefined;
          const yesNo = parseYesNo(answer);
          if (yesNo) return yesNo;
          const edit = /^e(dit)?\b\s*(.*)$/is.exec(answer.trim());
          if (!edit) {
            say("Type y to approve, n and a reason to reject, or e and the new arguments as JSON.");
            break;
          }
          let text = edit[2].trim();
          if (!text) {
            // The values in the person's editor, code as code; one line of JSON where none runs.
            const views = argumentViews(interrupt.arguments);
            const edited = editInEditor(views, this.ctx.env);
            if (edited !== undefined) {
              const parsed = parseEditableText(edited, views);
              if (parsed === undefined) {
                say("Nothing changed: the file was emptied.");
                break;
              }
              if ("error" in parsed) {
                say(c.red(parsed.error));
                break;
              }
              return { decision: "edit", arguments: parsed.arguments };
            }
            say(c.dim(`No editor ran (set EDITOR). Current arguments: ${JSON.stringify(interrupt.arguments ?? {})}`));
            const typed = await prompter.ask("New arguments (one line of JSON): ", signal);
            if (typed === undefined) return undefined;
            text = typed.trim();
          }
          const args = parseJsonObject(text);
          if (typeof args === "string") {
            say(c.red(args));
            break;
          }
          return { decision: "edit", arguments: args };
        }
        case "tool_failure": {
          const answer = await prompter.ask(
            `${c.bold(`${interrupt.toolName ?? "The tool call"} failed.`)} [r]etry / [s]kip (what the agent reads instead) / [f]ail (reason): `,
            signal,
          );
          if (answer === undefined) return undefined;
          const decided = parseFailureDecision(answer);
          if (decided) return decided;
          say("Type r to run the call again (once the cause is fixed), s and a message to skip it, or f and a reason to fail the task.");
          break;
        }
        case "ask_user": {
          const answer = await prompter.ask(`${c.bold("Your answer:")} `, signal);
          if (answer === undefined) return undefined;
          if (answer.trim()) return { decision: "answer", message: answer.trim() };
          say("The answer must not be empty.");
          break;
        }
        default:
          return undefined;
      }
    }
  }

  /** Sends the decision. true: done (accepted, or no longer ours to decide); false: ask again. */
  private async submit(interrupt: OpenedInterrupt, request: ResolveInterruptRequest): Promise<boolean> {
    try {
      await this.ctx.client.resolveInterrupt(this.ctx.runId, interrupt.interruptId, request);
      return true;
    } catch (error) {
      if (error instanceof ApiError && error.isAuth) throw error;
      const reason = error instanceof ApiError ? `${error.message} (${error.code})` : (error as Error).message;
      this.ctx.warn(`The decision was not accepted: ${reason}`);
      if (!(await this.stillPending(interrupt.interruptId))) return true;
      if (this.ctx.yes && interrupt.kind !== "ask_user") {
        this.curlHint(interrupt);
        return true;
      }
      return false;
    }
  }

  private async stillPending(interruptId: string): Promise<boolean> {
    try {
      const run = await this.ctx.client.getRun(this.ctx.runId);
      return run.pendingInterrupts.some((i) => i.interruptId === interruptId);
    } catch (error) {
      if (error instanceof ApiError && error.isAuth) throw error;
      return true; // cannot tell: assume it still waits
    }
  }

  /** Questions are read from stdin even with --yes; approvals only from a terminal. */
  private prompterFor(interrupt: OpenedInterrupt): Prompter | undefined {
    if (this.ctx.stdin.isTTY) {
      this.prompter ??= new TtyPrompter(this.ctx.stdin, this.ctx.promptOut, this.ctx.onSigint);
      return this.prompter;
    }
    if (this.ctx.yes && interrupt.kind === "ask_user") {
      this.prompter ??= new LinePrompter(this.ctx.stdin, this.ctx.notes);
      return this.prompter;
    }
    return undefined;
  }

  private curlHint(interrupt: OpenedInterrupt) {
    const examples: Record<string, string[]> = {
      plan_approval: [`{"decision":"approve"}`, `{"decision":"reject","message":"why"}`],
      tool_approval: [
        `{"decision":"approve"}`,
        `{"decision":"reject","message":"why"}`,
        `{"decision":"edit","arguments":${JSON.stringify(interrupt.arguments ?? {})}}`,
      ],
      ask_user: [`{"decision":"answer","message":"your answer"}`],
      tool_failure: [
        `{"decision":"retry"}`,
        `{"decision":"skip","message":"what the agent reads instead"}`,
        `{"decision":"fail","message":"why"}`,
      ],
    };
    const url = `${this.ctx.client.url}/v1/runs/${this.ctx.runId}/interrupts/${interrupt.interruptId}`;
    const lines = [
      `Waiting for a decision on ${interrupt.interruptId} (${interrupt.kind}); this terminal cannot ask, so decide with:`,
      `  curl -X POST '${url}' -H "Authorization: Bearer $STEPWISE_API_KEY" -H 'Content-Type: application/json' \\`,
      `    -d '${(examples[interrupt.kind] ?? [`{"decision":"approve"}`])[0].replaceAll("'", "'\\''")}'`,
      ...(examples[interrupt.kind] ?? []).slice(1).map((body) => `  or -d '${body.replaceAll("'", "'\\''")}'`),
      `or: stepwise decide ${this.ctx.runId} ${interrupt.interruptId} ${interrupt.kind === "ask_user" ? 'answer "your answer"' : interrupt.kind === "tool_failure" ? "retry" : "approve"}`,
      "Still watching; the run goes on once it is decided.",
    ];
    this.note(this.c.yellow(lines.join("\n")));
  }

  private note(text: string) {
    this.ctx.notes.write(`${text}\n`);
  }
}

/** "r", "retry" → retry; "s <message>", "skip: <message>" → skip; "f <reason>", "fail" → fail. */
export function parseFailureDecision(answer: string): ResolveInterruptRequest | undefined {
  const matched = /^(r|retry|s|skip|f|fail)(?:$|[\s:,.-]+([\s\S]*)$)/i.exec(answer.trim());
  if (!matched) return undefined;
  const decision = ({ r: "retry", s: "skip", f: "fail" } as const)[matched[1][0].toLowerCase() as "r" | "s" | "f"];
  const message = matched[2]?.trim();
  return { decision, ...(message && decision !== "retry" ? { message } : {}) };
}

/** "y", "yes" → approve; "n", "no", "n <reason>", "no: <reason>" → reject. */
export function parseYesNo(answer: string): ResolveInterruptRequest | undefined {
  const text = answer.trim();
  if (/^y(es)?$/i.test(text)) return { decision: "approve" };
  const no = /^n(o)?(?:$|[\s:,.-]+(.*)$)/is.exec(text);
  if (no) {
    const reason = no[2]?.trim();
    return reason ? { decision: "reject", message: reason } : { decision: "reject" };
  }
  return undefined;
}

/** A JSON object, or the reason it is not one. */
export function parseJsonObject(text: string): Record<string, unknown> | string {
  try {
    const value = JSON.parse(text);
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
    return 'The arguments must be a JSON object, e.g. {"filename": "notes.md", "content": "…"}.';
  } catch (error) {
    return `That is not JSON: ${(error as Error).message}`;
  }
}
