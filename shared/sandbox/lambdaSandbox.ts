import { InvokeCommand, type LambdaClient, waitUntilFunctionActive } from "@aws-sdk/client-lambda";
import { type SandboxRequest, SandboxResult } from "../contracts/sandbox.js";
import type { CodeSandbox } from "../ports/sandbox.js";

/**
 * How long a call waits for the sandbox to become Active again. Idle for weeks, a function in a
 * VPC goes Inactive (its network interfaces reclaimed); the call that finds it so fails, and Lambda
 * recreates them (Pending) within minutes.
 */
export const SANDBOX_WAKE_SECONDS = 300;

/** The sandbox function, invoked synchronously (RequestResponse). */
export class LambdaSandbox implements CodeSandbox {
  /** Each call is a fresh interpreter: only the run's files carry over. */
  readonly keepsState = false;
  readonly grant = "sandbox:invoke" as const;

  constructor(
    private readonly lambda: LambdaClient,
    private readonly functionName: string,
    private readonly wakeSeconds = SANDBOX_WAKE_SECONDS,
  ) {}

  async run(request: SandboxRequest, signal?: AbortSignal): Promise<SandboxResult> {
    const payload = Buffer.from(JSON.stringify(request));
    const invoke = () =>
      this.lambda.send(new InvokeCommand({ FunctionName: this.functionName, InvocationType: "RequestResponse", Payload: payload }), {
        abortSignal: signal,
      });
    let response: Awaited<ReturnType<typeof invoke>>;
    try {
      response = await invoke();
    } catch (error) {
      if (!isNotReady(error)) throw error;
      // The code never ran: wait until the function is Active again, then call it once more.
      await this.waitUntilActive(signal);
      response = await invoke();
    }
    const text = response.Payload ? Buffer.from(response.Payload).toString("utf8") : "null";
    if (response.FunctionError) {
      let message = text;
      try {
        message = JSON.parse(text).errorMessage ?? text;
      } catch {}
      throw new Error(`the sandbox failed: ${message}`);
    }
    return SandboxResult.parse(JSON.parse(text));
  }

  private async waitUntilActive(signal?: AbortSignal): Promise<void> {
    try {
      await waitUntilFunctionActive(
        { client: this.lambda, maxWaitTime: this.wakeSeconds, minDelay: 2, maxDelay: 15, abortSignal: signal },
        { FunctionName: this.functionName },
      );
    } catch (error) {
      throw new Error(`the sandbox function did not become active within ${this.wakeSeconds} s; try again later`, { cause: error });
    }
  }
}

/**
 * Lambda's answers to a call on a function that is not Active: ResourceNotReadyException (Inactive,
 * its VPC connection reclaimed), or ResourceConflictException naming the Pending state.
 */
function isNotReady(error: unknown): boolean {
  const { name, message } = error as { name?: string; message?: string };
  return name === "ResourceNotReadyException" || (name === "ResourceConflictException" && /\bPending\b/.test(message ?? ""));
}
