import { cpSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AssetHashType, DockerImage } from "aws-cdk-lib";
import { Architecture, Code, LayerVersion, Runtime } from "aws-cdk-lib/aws-lambda";
import type { Construct } from "constructs";
import { layerHash } from "./layerHash.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** The tokenizer's rank tables shared/memory/tokens.ts reads (1.6 MB zipped together). */
const TABLES = ["o200k_base", "cl100k_base"];

/**
 * The token counter's rank tables, in one layer the agent functions share: they ship once instead
 * of in every agent function, and stay out of its code (read on the first count, not parsed at
 * start). Lambda puts the layer's nodejs/node_modules on NODE_PATH, where the counter's `require`
 * finds them.
 */
export function tokenizerLayer(scope: Construct, id: string): LayerVersion {
  const source = path.join(root, "node_modules/js-tiktoken");
  return new LayerVersion(scope, id, {
    description: "Stepwise: the token counter's rank tables (js-tiktoken o200k_base, cl100k_base)",
    compatibleRuntimes: [Runtime.NODEJS_22_X],
    compatibleArchitectures: [Architecture.ARM_64],
    code: Code.fromAsset(source, {
      // Named by the package's version, the tables taken and this file (which copies them).
      assetHashType: AssetHashType.CUSTOM,
      assetHash: layerHash([fileURLToPath(import.meta.url)], {
        version: (JSON.parse(readFileSync(path.join(source, "package.json"), "utf8")) as { version: string }).version,
        tables: TABLES,
      }),
      // The files are copied as they are: nothing to build, so no container is ever needed.
      bundling: {
        image: DockerImage.fromRegistry("public.ecr.aws/docker/library/node:22"),
        local: {
          tryBundle(outputDir: string) {
            const target = path.join(outputDir, "nodejs/node_modules/js-tiktoken");
            mkdirSync(path.join(target, "dist/ranks"), { recursive: true });
            cpSync(path.join(source, "package.json"), path.join(target, "package.json"));
            for (const table of TABLES) cpSync(path.join(source, `dist/ranks/${table}.cjs`), path.join(target, `dist/ranks/${table}.cjs`));
            return true;
          },
        },
      },
    }),
  });
}
