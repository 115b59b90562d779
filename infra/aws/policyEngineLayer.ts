import { cpSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AssetHashType, DockerImage } from "aws-cdk-lib";
import { Architecture, Code, LayerVersion, Runtime } from "aws-cdk-lib/aws-lambda";
import type { Construct } from "constructs";
import { layerHash } from "./layerHash.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** The Cedar engine shared/policy/cedar.ts loads: WebAssembly the package's Node.js build reads beside its code. */
export const POLICY_ENGINE = "@cedar-policy/cedar-wasm";

/**
 * The tool policies' engine (Cedar, 4.3 MB of WebAssembly, 1.4 MB zipped) in one layer for the
 * functions that evaluate or check policies (the agent steps, the API): it ships once, stays out of
 * their code (no bundle can hold it: its loader reads the .wasm file next to itself), and is
 * loaded only when a tenant has policies. Lambda puts the layer's nodejs/node_modules on NODE_PATH,
 * where shared/lazyImport.ts finds it.
 */
export function policyEngineLayer(scope: Construct, id: string): LayerVersion {
  const source = path.join(root, "node_modules", POLICY_ENGINE);
  return new LayerVersion(scope, id, {
    description: "Stepwise: the tool policies' engine (@cedar-policy/cedar-wasm, Node.js build)",
    compatibleRuntimes: [Runtime.NODEJS_22_X],
    compatibleArchitectures: [Architecture.ARM_64],
    code: Code.fromAsset(source, {
      assetHashType: AssetHashType.CUSTOM,
      assetHash: layerHash([fileURLToPath(import.meta.url)], {
        version: (JSON.parse(readFileSync(path.join(source, "package.json"), "utf8")) as { version: string }).version,
      }),
      // Copied as it is (WebAssembly runs on any architecture): nothing to build, no container needed.
      bundling: {
        image: DockerImage.fromRegistry("public.ecr.aws/docker/library/node:22"),
        local: {
          tryBundle(outputDir: string) {
            buildPolicyEngine(path.join(outputDir, "nodejs/node_modules"));
            return true;
          },
        },
      },
    }),
  });
}

/** Copies the package's manifest and Node.js build into `modules` (also what a test uses to load it as Lambda would). */
export function buildPolicyEngine(modules: string): void {
  const source = path.join(root, "node_modules", POLICY_ENGINE);
  const target = path.join(modules, POLICY_ENGINE);
  mkdirSync(target, { recursive: true });
  cpSync(path.join(source, "package.json"), path.join(target, "package.json"));
  cpSync(path.join(source, "nodejs"), path.join(target, "nodejs"), { recursive: true });
}
