import {
  GetFunctionConfigurationCommand,
  InvokeCommand,
  type LambdaClient,
  ResourceNotReadyException,
  TooManyRequestsException,
} from "@aws-sdk/client-lambda";
import { describe, expect, it } from "vitest";
import { LambdaSandbox } from "../../../../shared/sandbox/lambdaSandbox.js";

/**
 * The sandbox function as Lambda answers it after weeks idle: Inactive (its network interfaces
 * reclaimed), the first call refused, then Pending, then Active. AWS itself is the only thing
 * faked: a client whose `send` answers each command as Lambda would.
 */
function lambdaThat(answers: { invoke: (() => unknown)[]; states: string[] }) {
  const calls: string[] = [];
  const client = {
    send: async (command: unknown) => {
      if (command instanceof InvokeCommand) {
        calls.push(`Invoke ${command.input.FunctionName}`);
        return answers.invoke.shift()!();
      }
      if (command instanceof GetFunctionConfigurationCommand) {
        const state = answers.states.length > 1 ? answers.states.shift()! : answers.states[0]!;
        calls.push(`GetFunctionConfiguration ${command.input.FunctionName} → ${state}`);
        return { State: state };
      }
      throw new Error(`unexpected command ${(command as object).constructor.name}`);
    },
  };
  return { client: client as unknown as LambdaClient, calls };
}

const VERSION = "arn:aws:lambda:eu-west-1:123456789012:function:stepwise-sandbox:7";
const result = { stdout: "2\n", stderr: "", value: null, error: null, timedOut: false, outputs: [], runMs: 3, startMs: 1 };
const ran = () => ({ Payload: Buffer.from(JSON.stringify(result)) });
const inactive = () => {
  throw new ResourceNotReadyException({
    $metadata: { httpStatusCode: 502 },
    message: "The function is inactive and its VPC connection is no longer available.",
  });
};

describe("the sandbox function, woken from Inactive", () => {
  it("a call that finds it Inactive waits until it is Active (its version, as pinned) and runs the code once more", async () => {
    const { client, calls } = lambdaThat({ invoke: [inactive, ran], states: ["Pending", "Active"] });
    const output = await new LambdaSandbox(client, VERSION, 60).run({ code: "print(1 + 1)" });
    expect(output.stdout).toBe("2\n");
    expect(calls).toEqual([
      `Invoke ${VERSION}`,
      `GetFunctionConfiguration ${VERSION} → Pending`,
      `GetFunctionConfiguration ${VERSION} → Active`,
      `Invoke ${VERSION}`,
    ]);
  });

  it("a function that cannot be woken (Failed) ends the call with a clear error, the code never run twice", async () => {
    const { client, calls } = lambdaThat({ invoke: [inactive, ran], states: ["Failed"] });
    await expect(new LambdaSandbox(client, VERSION, 60).run({ code: "1" })).rejects.toThrow(/did not become active/);
    expect(calls.filter((c) => c.startsWith("Invoke"))).toHaveLength(1);
  });

  it("other refusals (throttling) are not waited on here: the step's retries have them", async () => {
    const throttled = () => {
      throw new TooManyRequestsException({ $metadata: { httpStatusCode: 429 }, message: "Rate exceeded" });
    };
    const { client, calls } = lambdaThat({ invoke: [throttled], states: ["Active"] });
    await expect(new LambdaSandbox(client, VERSION, 60).run({ code: "1" })).rejects.toThrow(/Rate exceeded/);
    expect(calls).toEqual([`Invoke ${VERSION}`]);
  });
});
