/**
 * Reading a person's answers: from a terminal (one readline per question) or, for questions
 * answered with --yes, from a pipe (one reader for the whole run).
 */
import { createInterface, type Interface } from "node:readline";

export interface Prompter {
  readonly output: NodeJS.WriteStream;
  /** One line typed by the person; undefined when input ended or `signal` aborted. */
  ask(query: string, signal: AbortSignal): Promise<string | undefined>;
  /** A line for the person, next to the prompts. */
  say(text: string): void;
  close(): void;
}

/**
 * On a terminal: a readline interface per question, closed after it, so nothing typed between
 * questions is taken as an answer and stdin does not keep the process alive. readline puts the
 * terminal in raw mode, so Ctrl-C reaches it rather than the process: it detaches all the same.
 */
export class TtyPrompter implements Prompter {
  constructor(
    private readonly input: NodeJS.ReadStream,
    readonly output: NodeJS.WriteStream,
    private readonly onSigint: () => void,
  ) {}

  say(text: string) {
    this.output.write(`${text}\n`);
  }

  ask(query: string, signal: AbortSignal): Promise<string | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    const rl = createInterface({ input: this.input, output: this.output, terminal: true });
    return new Promise<string | undefined>((resolve) => {
      let settled = false;
      const done = (answer: string | undefined) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener("abort", onAbort);
        resolve(answer);
        rl.close();
      };
      const onAbort = () => {
        this.output.write("\n");
        done(undefined);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      rl.on("SIGINT", () => {
        done(undefined);
        this.onSigint();
      });
      rl.once("close", () => done(undefined));
      rl.question(query, (answer) => done(answer));
    });
  }

  close() {}
}

/**
 * From a pipe: one reader for the whole session (a pipe's lines may all arrive at once), lines
 * queued until asked for. The answer is echoed so the transcript reads like a terminal's.
 */
export class LinePrompter implements Prompter {
  private rl: Interface | undefined;
  private readonly lines: string[] = [];
  private ended = false;
  private waiter: (() => void) | undefined;

  constructor(
    private readonly input: NodeJS.ReadStream,
    readonly output: NodeJS.WriteStream,
  ) {}

  say(text: string) {
    this.output.write(`${text}\n`);
  }

  async ask(query: string, signal: AbortSignal): Promise<string | undefined> {
    this.start();
    this.output.write(query);
    while (this.lines.length === 0 && !this.ended && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener("abort", wake);
          this.waiter = undefined;
          resolve();
        };
        this.waiter = wake;
        signal.addEventListener("abort", wake, { once: true });
      });
    }
    if (signal.aborted || this.lines.length === 0) {
      this.output.write("\n");
      return undefined;
    }
    const line = this.lines.shift();
    this.output.write(`${line}\n`);
    return line;
  }

  close() {
    this.rl?.close();
  }

  private start() {
    if (this.rl) return;
    this.rl = createInterface({ input: this.input, terminal: false });
    this.rl.on("line", (line) => {
      this.lines.push(line);
      this.waiter?.();
    });
    this.rl.once("close", () => {
      this.ended = true;
      this.waiter?.();
    });
  }
}
