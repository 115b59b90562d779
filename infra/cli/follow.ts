/**
 * Following one run on this terminal (`run` and `watch`): its events are shown as they come,
 * interrupts are handed to Approvals, and the exit code comes from how the run ended. Ctrl-C
 * detaches; the run goes on.
 */

import type { CreateRunBody, StepwiseClient } from "../../shared/apiClient/client.js";
import { ConnectionError } from "../../shared/apiClient/errors.js";
import type { RunEvent } from "../../shared/contracts/events.js";
import type { RunView } from "../../shared/contracts/responses.js";
import { TERMINAL_STATUSES } from "../../shared/contracts/terminal.js";
import { Approvals } from "./approvals.js";
import type { Connection } from "./args.js";
import { EventQueue } from "./eventQueue.js";
import { EXIT } from "./exitCodes.js";
import { type Palette, palette, Renderer, useColor } from "./render.js";

/** The process's streams and environment (tests pass their own). */
export interface Io {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
  env: NodeJS.ProcessEnv;
}

/** How a run's last event sets the exit code. */
const TERMINAL_EXIT: Record<string, number> = {
  "run.succeeded": EXIT.ok,
  "run.failed": EXIT.runFailed,
  "run.timed_out": EXIT.runFailed,
  "run.cancelled": EXIT.runFailed,
  "run.interrupted": EXIT.runFailed,
  "run.blocked": EXIT.runFailed,
  "run.budget_exhausted": EXIT.runFailed,
};

/** Thrown out of the event loop when the person detaches (Ctrl-C). */
class Detached extends Error {}

/** One run followed on this terminal: events in, lines and decisions out. */
export class Session {
  private readonly renderer: Renderer;
  private readonly detach = new AbortController();
  private readonly queue = new EventQueue();
  private runId = "";
  private detachedByUser = false;
  /** Status lines: with the live view on stdout, on stderr when stdout carries JSON lines. */
  private readonly notes: NodeJS.WriteStream;
  /** Colours for the status lines. */
  private readonly c: Palette;
  /** Where a terminal's prompts go: stdout if it is the terminal, else stderr (stdout is data). */
  private readonly promptOut: NodeJS.WriteStream;

  constructor(
    private readonly client: StepwiseClient,
    private readonly io: Io,
    private readonly conn: Connection,
    private readonly options: { yes: boolean; json: boolean },
  ) {
    this.notes = options.json ? io.stderr : io.stdout;
    this.promptOut = !options.json && io.stdout.isTTY ? io.stdout : io.stderr;
    this.renderer = new Renderer({ color: useColor(this.notes, io.env) });
    this.c = this.renderer.c;
  }

  async submitAndFollow(body: CreateRunBody): Promise<number> {
    const created = await this.client.createRun(body);
    this.runId = created.runId;
    const { c } = this;
    this.note(
      `${c.bold(`Run ${created.runId}`)} submitted ${c.dim(`(session ${created.sessionId})`)}. Following it live; Ctrl-C detaches.`,
    );
    return this.follow(created.links.stream);
  }

  async attach(runId: string): Promise<number> {
    const run = await this.client.getRun(runId);
    this.runId = run.runId;
    const { c } = this;
    this.note(
      `${c.bold(`Run ${run.runId}`)} is ${run.status}. ${TERMINAL_STATUSES.has(run.status) ? "Replaying its events." : "Following it live; Ctrl-C detaches."}`,
    );
    return this.follow(run.links.stream);
  }

  private async follow(streamUrl: string): Promise<number> {
    const onSigint = () => this.onSigint();
    process.on("SIGINT", onSigint);
    const approvals = new Approvals({
      client: this.client,
      runId: this.runId,
      stdin: this.io.stdin,
      env: this.io.env,
      yes: this.options.yes,
      json: this.options.json,
      queue: this.queue,
      detach: this.detach.signal,
      renderer: this.renderer,
      notes: this.notes,
      promptOut: this.promptOut,
      onSigint,
      warn: (text) => this.warn(text),
    });
    const pump = this.pump(streamUrl);
    let terminal: string | undefined;
    try {
      for (;;) {
        const event = await this.queue.next();
        if (!event) break;
        if (this.detach.signal.aborted) throw new Detached();
        this.show(event);
        if (TERMINAL_EXIT[event.type] !== undefined) terminal = event.type;
        if (event.type === "interrupt.opened") {
          await approvals.decide(event.data);
          if (this.detach.signal.aborted) throw new Detached(); // Ctrl-C while a decision was asked for
        }
      }
    } catch (error) {
      if (error instanceof Detached || this.detach.signal.aborted) return this.detached();
      if (error instanceof ConnectionError)
        this.io.stderr.write(`The run may well go on; attach again later with: ${this.watchCommand()}\n`);
      throw error;
    } finally {
      process.off("SIGINT", onSigint);
      approvals.close();
      this.detach.abort();
      await pump;
    }
    if (this.detachedByUser) return this.detached();

    if (!this.options.json) this.print(this.renderer.flushAll());
    let run: RunView | undefined;
    try {
      run = await this.client.getRun(this.runId);
    } catch (error) {
      if (!terminal) throw error;
    }
    if (!terminal && run) {
      // The stream ended because the run ended without a terminal event.
      if (this.options.json) this.note(`The run ended (${run.status}) without a terminal event.`);
      else this.print(this.renderer.outcome(run));
    }
    if (run && !this.options.json) this.print(this.renderer.summary(run));
    if (terminal) return TERMINAL_EXIT[terminal];
    return run?.status === "succeeded" ? EXIT.ok : EXIT.runFailed;
  }

  private async pump(streamUrl: string): Promise<void> {
    try {
      for await (const event of this.client.follow(this.runId, {
        streamUrl,
        signal: this.detach.signal,
        onReconnect: ({ reason, delayMs, attempt, lastEventId }) => {
          // A stream the server ended (its time limit) resumes quietly; failures are worth a word.
          if (attempt === 0) return;
          const where = lastEventId ? ` after event ${lastEventId}` : "";
          this.warn(`Stream: ${reason}; reconnecting${where} in ${(delayMs / 1000).toFixed(1)} s (attempt ${attempt}).`);
        },
        onWarning: (message) => this.warn(message),
      })) {
        this.queue.push(event);
      }
      this.queue.close();
    } catch (error) {
      this.queue.close(this.detach.signal.aborted ? new Detached() : error);
    }
  }

  private onSigint() {
    if (this.detachedByUser) process.exit(EXIT.detached); // a second Ctrl-C does not wait for anything
    this.detachedByUser = true;
    this.detach.abort();
  }

  private detached(): number {
    this.io.stderr.write(`\nDetached from run ${this.runId}; it goes on. Attach again with: ${this.watchCommand()}\n`);
    return EXIT.detached;
  }

  private watchCommand(): string {
    return `stepwise watch ${this.runId}${this.conn.urlFromFlag ? ` --url ${this.conn.url}` : ""}`;
  }

  private show(event: RunEvent) {
    if (this.options.json) this.io.stdout.write(`${JSON.stringify(event)}\n`);
    else this.print(this.renderer.event(event));
  }

  private print(lines: string[]) {
    if (lines.length > 0) this.io.stdout.write(`${lines.join("\n")}\n`);
  }

  private note(text: string) {
    this.notes.write(`${text}\n`);
  }

  private warn(text: string) {
    this.io.stderr.write(`${palette(useColor(this.io.stderr, this.io.env)).yellow("!")} ${text}\n`);
  }
}
