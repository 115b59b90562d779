import { cpSync, mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { LayerVersion } from "aws-cdk-lib/aws-lambda";
import type { Construct } from "constructs";
import { installedPackage, packageLayer } from "./packageLayer.js";

/** The tokenizer's rank tables shared/memory/tokens.ts reads (1.6 MB zipped together). */
const TABLES = ["o200k_base", "cl100k_base"];

/**
 * The token counter's rank tables, in one layer the agent functions share: they ship once instead
 * of in every agent function, and stay out of its code (read on the first count, not parsed at
 * start). The counter's `require` finds them on the layer's NODE_PATH.
 */
export function tokenizerLayer(scope: Construct, id: string): LayerVersion {
  const source = installedPackage("js-tiktoken");
  return packageLayer(scope, id, {
    packageName: "js-tiktoken",
    description: "Stepwise: the token counter's rank tables (js-tiktoken o200k_base, cl100k_base)",
    builder: fileURLToPath(import.meta.url),
    inputs: { tables: TABLES },
    copy(modules) {
      const target = path.join(modules, "js-tiktoken");
      mkdirSync(path.join(target, "dist/ranks"), { recursive: true });
      cpSync(path.join(source, "package.json"), path.join(target, "package.json"));
      for (const table of TABLES) cpSync(path.join(source, `dist/ranks/${table}.cjs`), path.join(target, `dist/ranks/${table}.cjs`));
    },
  });
}
