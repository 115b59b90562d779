/** The `stepwise` command: runs the CLI on the process's arguments, then exits with its code. */
import { main } from "./main.js";

const code = await main(process.argv.slice(2));
// Exit once what was written has been flushed (open sockets or stdin must not keep us waiting).
process.stdout.write("", () => process.exit(code));
