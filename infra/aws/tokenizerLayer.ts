import { cpSync, mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { LayerVersion } from "aws-cdk-lib/aws-lambda";
import type { Construct } from "constructs";
import { installedVersion } from "./layerBinaries.js";
import { installedPackage, packageLayer } from "./packageLayer.js";

/** The tokenizer's rank tables shared/memory/tokens.ts reads (1.6 MB zipped together). */
const TABLES = ["o200k_base", "cl100k_base"];
/** The image reader tokens.ts requires on the first image (its pixels decide its tokens), with its dependencies. */
const IMAGE_READER = ["image-size", "queue", "inherits"];

/**
 * The token counter's rank tables, in one layer the agent functions share: they ship once instead
 * of in every agent function, and stay out of its code (read on the first count, not parsed at
 * start). The counter's `require` finds them on the layer's NODE_PATH, and image-size too.
 */
export function tokenizerLayer(scope: Construct, id: string): LayerVersion {
  return packageLayer(scope, id, {
    packageName: "js-tiktoken",
    description: "Stepwise: the token counter's rank tables (js-tiktoken o200k_base, cl100k_base) and image reader (image-size)",
    builder: fileURLToPath(import.meta.url),
    inputs: { tables: TABLES, imageReader: Object.fromEntries(IMAGE_READER.map((name) => [name, installedVersion(name)])) },
    copy: buildTokenizerLayer,
  });
}

/** Copies the layer's packages into `modules` (also what a test uses to count as a Lambda would). */
export function buildTokenizerLayer(modules: string): void {
  const source = installedPackage("js-tiktoken");
  const target = path.join(modules, "js-tiktoken");
  mkdirSync(path.join(target, "dist/ranks"), { recursive: true });
  cpSync(path.join(source, "package.json"), path.join(target, "package.json"));
  for (const table of TABLES) cpSync(path.join(source, `dist/ranks/${table}.cjs`), path.join(target, `dist/ranks/${table}.cjs`));
  for (const name of IMAGE_READER) cpSync(installedPackage(name), path.join(modules, name), { recursive: true });
}
