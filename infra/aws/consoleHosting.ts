import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type HttpApi, HttpMethod } from "aws-cdk-lib/aws-apigatewayv2";
import type { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import type { StepwiseBundling } from "./stepwiseFunction.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** Where the API function finds the console in its bundle (/var/task is the function's code). */
export const CONSOLE_ASSETS_DIR = "/var/task/console";

/**
 * The console rides in the API function's bundle: esbuild builds it beside the handler at
 * `cdk synth`/`deploy` time, and the same handler serves it, so it is same-origin with the API.
 */
export function withConsoleBundle(bundling: StepwiseBundling = {}): StepwiseBundling {
  return {
    ...bundling,
    afterBundling: (outputDir: string) => {
      bundling.afterBundling?.(outputDir);
      execFileSync(process.execPath, ["--import", "tsx", path.join(root, "infra/console/build.ts"), path.join(outputDir, "console")], {
        cwd: root,
        stdio: "inherit",
      });
    },
  };
}

/** The routes that reach the API function besides /v1: the console's page and assets, and /health. */
export function addConsoleRoutes(httpApi: HttpApi, integration: HttpLambdaIntegration): void {
  for (const path of ["/", "/console.js", "/console.css", "/favicon.svg", "/favicon.ico", "/health"]) {
    httpApi.addRoutes({ path, methods: [HttpMethod.GET], integration });
  }
}
