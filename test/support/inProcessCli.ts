import { Readable, Writable } from "node:stream";
import { main } from "../../infra/cli/main.js";

/**
 * The `stepwise` command run in the test's own process: the bin's `main` (infra/cli/main.ts) with
 * stdin closed (not a terminal), stdout and stderr read as text, and only the variables given (no
 * STEPWISE_* from the caller; NO_COLOR set). A child process of the bin starts tsx and the whole CLI
 * again (10-20 s on a loaded machine): test/integration/cli.test.ts runs the bin that way, the
 * other commands run here.
 */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A stream that only collects what is written to it, as text; not a terminal. */
class Collected extends Writable {
  text = "";
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void) {
    this.text += String(chunk);
    done();
  }
}

/** Starts the command; `stdout()` reads what it has printed so far, `done` its end. */
export function startStepwise(args: string[], env: Record<string, string> = {}): { done: Promise<CliResult>; stdout: () => string } {
  const stdout = new Collected();
  const stderr = new Collected();
  const done = main(args, {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stderr: stderr as unknown as NodeJS.WriteStream,
    stdin: Readable.from([]) as unknown as NodeJS.ReadStream,
    env: { NO_COLOR: "1", ...env },
  }).then((code) => ({ code, stdout: stdout.text, stderr: stderr.text }));
  return { done, stdout: () => stdout.text };
}

/** Runs the command to its end. */
export const stepwise = (args: string[], env: Record<string, string> = {}): Promise<CliResult> => startStepwise(args, env).done;

/** Runs the command in `folder` (where `files --download` saves), then goes back to the current directory. */
export async function stepwiseIn(folder: string, args: string[]): Promise<CliResult> {
  const here = process.cwd();
  process.chdir(folder);
  try {
    return await stepwise(args);
  } finally {
    process.chdir(here);
  }
}
