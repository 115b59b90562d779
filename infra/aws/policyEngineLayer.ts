import { cpSync, mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { LayerVersion } from "aws-cdk-lib/aws-lambda";
import type { Construct } from "constructs";
import { installedPackage, packageLayer } from "./packageLayer.js";

/** The Cedar engine shared/policy/cedar.ts loads: WebAssembly the package's Node.js build reads beside its code. */
export const POLICY_ENGINE = "@cedar-policy/cedar-wasm";

/**
 * The tool policies' engine (Cedar, 4.3 MB of WebAssembly, 1.4 MB zipped) in one layer for the
 * functions that evaluate or check policies (the agent steps, the API): it ships once, stays out of
 * their code (no bundle can hold it: its loader reads the .wasm file next to itself), and is
 * loaded only when a tenant has policies, from the layer's NODE_PATH (shared/lazyImport.ts).
 * WebAssembly runs on any architecture: the build is copied as it is.
 */
export function policyEngineLayer(scope: Construct, id: string): LayerVersion {
  return packageLayer(scope, id, {
    packageName: POLICY_ENGINE,
    description: "Stepwise: the tool policies' engine (@cedar-policy/cedar-wasm, Node.js build)",
    builder: fileURLToPath(import.meta.url),
    copy: buildPolicyEngine,
  });
}

/** Copies the package's manifest and Node.js build into `modules` (also what a test uses to load it as Lambda would). */
export function buildPolicyEngine(modules: string): void {
  const source = installedPackage(POLICY_ENGINE);
  const target = path.join(modules, POLICY_ENGINE);
  mkdirSync(target, { recursive: true });
  cpSync(path.join(source, "package.json"), path.join(target, "package.json"));
  cpSync(path.join(source, "nodejs"), path.join(target, "nodejs"), { recursive: true });
}
