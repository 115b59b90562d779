import path from "node:path";
import ts from "typescript";
import type { Layer } from "./layers.js";

/** One source file: its path from the repository's root ("/"-separated) and its text. */
export interface SourceFile {
  path: string;
  text: string;
}

/** An import the rule forbids, or a file no layer holds. */
export interface Violation {
  file: string;
  line: number;
  target: string;
  message: string;
}

/** The AWS SDK and the CDK: the core reaches AWS only through its ports. */
const AWS_PACKAGES = /^(@aws-sdk\/|@smithy\/|aws-cdk-lib(\/|$)|constructs$|cdk-nag$)/;

const RESOLVED_EXTENSIONS = ["", ".ts", ".mts", ".tsx", ".mjs", ".js", "/index.ts"];

/** The unit holding a path: the closest match (a file path beats its folder, a deeper folder a shallower one). */
export function unitOf(layers: Layer[], file: string): Layer | undefined {
  let best: { layer: Layer; length: number } | undefined;
  for (const layer of layers) {
    for (const p of layer.paths) {
      const matches = p.endsWith("/") ? file.startsWith(p) : file === p;
      if (matches && (!best || p.length > best.length)) best = { layer, length: p.length };
    }
  }
  return best?.layer;
}

/** The file a relative specifier names among the known files (`./x.js` is `./x.ts` in TypeScript's NodeNext). */
function resolve(from: string, specifier: string, known: Set<string>): string {
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  const stem = joined.replace(/\.(m?js|jsx)$/, "");
  for (const candidate of [joined, ...RESOLVED_EXTENSIONS.map((ext) => stem + ext)]) if (known.has(candidate)) return candidate;
  return joined;
}

/** The units' declared imports must form no cycle: otherwise "lower" means nothing. */
export function layerCycle(layers: Layer[]): string[] | undefined {
  const byName = new Map(layers.map((l) => [l.name, l]));
  const state = new Map<string, "open" | "done">();
  const visit = (name: string, trail: string[]): string[] | undefined => {
    if (state.get(name) === "done") return undefined;
    if (state.get(name) === "open") return [...trail.slice(trail.indexOf(name)), name];
    state.set(name, "open");
    for (const next of byName.get(name)?.imports ?? []) {
      if (next === "*" || next === name) continue;
      const cycle = visit(next, [...trail, name]);
      if (cycle) return cycle;
    }
    state.set(name, "done");
    return undefined;
  };
  for (const layer of layers) {
    const cycle = visit(layer.name, []);
    if (cycle) return cycle;
  }
  return undefined;
}

/** An import forgiven until another change removes it (layers.ts's PENDING). */
export interface PendingImport {
  file: string;
  target: string;
  until: string;
}

/**
 * Every relative import (static, dynamic, type-only, re-export) that crosses from one unit to one it
 * may not import, except the pending ones; and every pending one that no longer occurs.
 */
export function findViolations(layers: Layer[], files: SourceFile[], pending: PendingImport[] = []): Violation[] {
  const names = new Set(layers.map((l) => l.name));
  for (const layer of layers)
    for (const name of layer.imports)
      if (name !== "*" && !names.has(name)) throw new Error(`layer "${layer.name}" names an unknown layer "${name}"`);
  const known = new Set(files.map((f) => f.path));
  const violations: Violation[] = [];
  const unused = new Set(pending);
  for (const file of files) {
    const from = unitOf(layers, file.path);
    if (!from) {
      violations.push({
        file: file.path,
        line: 1,
        target: "",
        message: "no layer holds this file (add its folder to test/imports/layers.ts)",
      });
      continue;
    }
    if (from.imports.includes("*")) continue;
    const { importedFiles } = ts.preProcessFile(file.text, true, true);
    for (const imported of importedFiles) {
      const line = file.text.slice(0, imported.pos).split("\n").length;
      if (!imported.fileName.startsWith(".")) {
        if (AWS_PACKAGES.test(imported.fileName) && !from.aws)
          violations.push({
            file: file.path,
            line,
            target: imported.fileName,
            message: `${from.name} may not import the AWS SDK or the CDK: only the AWS adapters, the handlers, the CDK app and the local emulator do`,
          });
        continue;
      }
      const target = resolve(file.path, imported.fileName, known);
      const to = unitOf(layers, target);
      if (to === from || (to && from.imports.includes(to.name))) continue;
      const forgiven = pending.find((p) => p.file === file.path && p.target === target);
      if (forgiven) {
        unused.delete(forgiven);
        continue;
      }
      violations.push({
        file: file.path,
        line,
        target,
        message: to
          ? `${from.name} may not import ${to.name} (${to.holds}); ${from.name} may import: ${from.imports.join(", ") || "nothing"}`
          : `${target} is in no layer`,
      });
    }
  }
  for (const p of unused)
    violations.push({
      file: p.file,
      line: 1,
      target: p.target,
      message: `no longer imported (${p.until}): delete it from PENDING in test/imports/layers.ts`,
    });
  return violations;
}
