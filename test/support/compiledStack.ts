import { copyFileSync, mkdirSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";

/**
 * The test stacks' code, compiled once per test run (the globalSetup of the projects that start
 * stacks): each TypeScript file of infra/, functions/ and shared/ becomes the JavaScript file
 * beside it in a copy of the tree, so each of the run's stacks starts as plain Node instead of
 * compiling through tsx (a third of a start's CPU time, and more at each step's first load).
 * startStack runs the copy when STACK_JS_ENV names it; `npm start` and the startup test keep tsx.
 */

/** The copy's folder, for startStack (set for the test workers, which inherit this process's environment). */
export const STACK_JS_ENV = "STEPWISE_TEST_STACK_JS";

const root = path.resolve(import.meta.dirname, "../..");
const SOURCES = ["infra", "functions", "shared"];

/**
 * Compiles into `out`, file by file (no bundling: the stack loads each handler by its path, as
 * Lambda loads each function's own). Every source file is also linked there under its own name: the
 * stack reads some beside its code (the console's files, the sandbox's scripts), and hashes the CDK
 * app's sources to find its cached state machine. node_modules and the lockfile are linked too, so
 * packages, and the state machine cache in node_modules/.cache, are the project's own.
 */
export async function compileStack(out: string): Promise<void> {
  rmSync(out, { recursive: true, force: true });
  const typescript: string[] = [];
  const link = (relative: string) => {
    mkdirSync(path.dirname(path.join(out, relative)), { recursive: true });
    symlinkSync(path.join(root, relative), path.join(out, relative));
  };
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const relative = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules") walk(relative);
        continue;
      }
      link(relative);
      if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) typescript.push(relative);
    }
  };
  for (const dir of SOURCES) walk(dir);
  link("node_modules");
  link("package-lock.json");
  // A copy, not a link: Node reads "type": "module" from the package.json nearest the compiled files.
  copyFileSync(path.join(root, "package.json"), path.join(out, "package.json"));
  await build({
    entryPoints: typescript.map((file) => path.join(root, file)),
    outdir: out,
    outbase: root,
    bundle: false,
    format: "esm",
    platform: "node",
    // The oldest Node the project supports; import attributes (`with { type: "json" }`) kept as written.
    target: "node20.19",
    supported: { "import-attributes": true },
    sourcemap: "inline",
    logLevel: "error",
  });
}

/** Set once compiled in this process: each project that lists this setup runs it, the first compiles. */
const COMPILED = Symbol.for("stepwise.test.compiledStack");

export default async function setup() {
  const state = globalThis as { [COMPILED]?: Promise<void> };
  if (state[COMPILED]) return state[COMPILED];
  // One folder per test run: two runs in one checkout (the Node 20 and 22 parts, or two people's) never share one.
  const out = path.join(root, "node_modules/.cache/stepwise-test-stack", String(process.pid));
  state[COMPILED] = compileStack(out);
  await state[COMPILED];
  process.env[STACK_JS_ENV] = out;
  return () => rmSync(out, { recursive: true, force: true });
}
