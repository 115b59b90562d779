#!/usr/bin/env node
// The `stepwise` command (package.json "bin"): loads tsx, then runs ./main.ts.
// The tsconfig is the repo's, whatever the current directory.
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";

register({ tsconfig: fileURLToPath(new URL("../../tsconfig.json", import.meta.url)) });
const { main } = await import("./main.ts");
const code = await main(process.argv.slice(2));
// Exit once what was written has been flushed (open sockets or stdin must not keep us waiting).
process.stdout.write("", () => process.exit(code));
