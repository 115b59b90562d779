// One local "Lambda container" (see containers.ts): loads the handlers named on its command line,
// answers the stack's invocations over IPC, and ends when the stack is gone.
import { invokeLambda, loadHandler } from "./lambda.js";
import { readableOutput } from "./terminalLog.js";

const entries = process.argv.slice(2);
// The handlers' log lines as the stack shows its own (its stdout and stderr are the stack's).
if (process.env.STEPWISE_LOG_FORMAT !== "json") for (const stream of [process.stdout, process.stderr]) readableOutput(stream);

process.on("disconnect", () => process.exit(0));
await Promise.all(entries.map(loadHandler));

const send = process.send?.bind(process);
if (!send) throw new Error("container.ts runs forked by containers.ts, with an IPC channel to answer on.");

process.on("message", async (message: { id: number; entry: string; event: unknown }) => {
  try {
    const result = await invokeLambda(message.entry, message.event);
    if (process.connected) send({ id: message.id, result });
  } catch (error) {
    const err = error as Error;
    if (process.connected) send({ id: message.id, error: { name: err.name, message: err.message } });
  }
});
send({ ready: true });
