#!/usr/bin/env node
// The `stepwise` command in this repository (package.json "bin"): loads tsx, then runs ./command.ts.
// The tsconfig is the repo's, whatever the current directory. The installable package runs the
// same command bundled (infra/cli/build.ts).
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";

register({ tsconfig: fileURLToPath(new URL("../../tsconfig.json", import.meta.url)) });
await import("./command.ts");
