import { LambdaClient } from "@aws-sdk/client-lambda";
import type { Config } from "../config.js";
import { LambdaSandbox } from "../sandbox/lambdaSandbox.js";
import { runCodeTool } from "./runCode.js";
import type { Tool } from "./tool.js";
import { writeReport } from "./writeReport.js";

/** The tools that do real work beyond the table: the code interpreter, web research, reports. */
export function workTools(config: Config): Tool[] {
  const sandbox = new LambdaSandbox(new LambdaClient({ region: config.AWS_REGION }), config.SANDBOX_FUNCTION_NAME);
  return [runCodeTool(sandbox, { timeoutMs: config.SANDBOX_TIMEOUT_MS, memoryMb: config.SANDBOX_MEMORY_MB, maxOutputChars: 20_000 }), writeReport];
}
