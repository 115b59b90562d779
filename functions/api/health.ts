import packageJson from "../../package.json" with { type: "json" };
import { type HttpResult, json } from "../http.js";
import type { Request } from "./routes.js";

export const VERSION: string = packageJson.version;

/**
 * `GET /health`, without a key: 200 with the version once the dependencies a request needs answer
 * (the table, and a state machine to start runs on); 503 with what is missing before that.
 */
export async function health({ services }: Request): Promise<HttpResult> {
  const checks: Record<string, "ok" | string> = {};
  await services.table
    .probe()
    .then(() => (checks.table = "ok"))
    .catch((error: Error) => (checks.table = error.name || "unavailable"));
  checks.stateMachine = services.settings.stateMachineArn ? "ok" : "not configured";
  const ok = Object.values(checks).every((c) => c === "ok");
  return json(ok ? 200 : 503, { status: ok ? "ok" : "unavailable", version: VERSION, checks }, ok ? {} : { "retry-after": "1" });
}
