import { InvokeCommand, type LambdaClient } from "@aws-sdk/client-lambda";
import { type SandboxRequest, SandboxResult } from "../contracts/sandbox.js";
import type { CodeSandbox } from "../ports/sandbox.js";

/** The sandbox function, invoked synchronously (RequestResponse). */
export class LambdaSandbox implements CodeSandbox {
  /** Each call is a fresh interpreter: only the run's files carry over. */
  readonly keepsState = false;
  readonly grant = "sandbox:invoke" as const;

  constructor(
    private readonly lambda: LambdaClient,
    private readonly functionName: string,
  ) {}

  async run(request: SandboxRequest, signal?: AbortSignal): Promise<SandboxResult> {
    const response = await this.lambda.send(
      new InvokeCommand({
        FunctionName: this.functionName,
        InvocationType: "RequestResponse",
        Payload: Buffer.from(JSON.stringify(request)),
      }),
      { abortSignal: signal },
    );
    const payload = response.Payload ? Buffer.from(response.Payload).toString("utf8") : "null";
    if (response.FunctionError) {
      let message = payload;
      try {
        message = JSON.parse(payload).errorMessage ?? payload;
      } catch {}
      throw new Error(`the sandbox failed: ${message}`);
    }
    return SandboxResult.parse(JSON.parse(payload));
  }
}
