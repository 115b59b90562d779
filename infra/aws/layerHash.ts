import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

/**
 * A layer's asset hash: what it is built from (package versions, file lists) and the code that
 * builds it, so a change to either publishes a new layer version, and with cdk.json's
 * `@aws-cdk/aws-lambda:recognizeLayerVersion` new versions of the functions that use it (the state
 * machine invokes those, so a layer-only change reaches new runs).
 */
export function layerHash(builders: string[], inputs: unknown): string {
  const hash = createHash("sha256");
  for (const builder of builders) hash.update(readFileSync(builder));
  return hash.update(JSON.stringify(inputs)).digest("hex");
}
