/**
 * The import rule, run by `npm test` (and `npm run check:imports`): prints every import that runs
 * from a layer to one it may not import (test/imports/layers.ts) and fails if there is any.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { findViolations, layerCycle, type SourceFile } from "./importRule.js";
import { LAYERS, PENDING } from "./layers.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const FOLDERS = ["infra", "functions", "shared", "test"];
const SKIPPED = new Set(["node_modules", "dist", "cdk.out", ".stepwise", "fixtures"]);
const SOURCE = /\.(ts|mts|tsx|mjs|js)$/;

function sources(folder: string): SourceFile[] {
  return readdirSync(path.join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : sources(rel);
    return SOURCE.test(entry.name) ? [{ path: rel, text: readFileSync(path.join(ROOT, rel), "utf8") }] : [];
  });
}

const cycle = layerCycle(LAYERS);
if (cycle) {
  console.error(`test/imports/layers.ts: the layers import each other in a cycle: ${cycle.join(" → ")}`);
  process.exit(1);
}
const files = FOLDERS.flatMap(sources);
const violations = findViolations(LAYERS, files, PENDING);
for (const v of violations) console.error(`${v.file}:${v.line} imports ${v.target}\n  ${v.message}`);
if (violations.length > 0) {
  console.error(`\n${violations.length} import(s) break the layers (test/imports/layers.ts, docs/architecture.md).`);
  process.exit(1);
}
console.log(`Imports: ${files.length} files keep to their layers (${PENDING.length} pending imports wait for other parts of issue 37).`);
