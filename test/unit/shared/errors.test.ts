import { ProvisionedThroughputExceededException, ResourceNotFoundException } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { AgentError, BadRequestError, RETRYABLE_STEP_ERRORS, StepError, StepErrorCode, toStepError } from "../../../shared/errors.js";
import { withDeadline } from "../../../shared/llm/deadline.js";
import { OpenAIModel } from "../../../shared/llm/openaiModel.js";
import { type ScriptedModel, type ScriptStep, startScriptedModel } from "../../support/scriptedModel.js";

/** The error a step leaves with is named by its code: what the state machine's Retry/Catch match. */
describe("toStepError", () => {
  const meta = { $metadata: {} };
  it.each([
    ["DynamoDB throttling", new ProvisionedThroughputExceededException({ message: "slow down", ...meta }), StepErrorCode.AwsUnavailable],
    ["an AWS error that is ours to fix", new ResourceNotFoundException({ message: "no table", ...meta }), StepErrorCode.Internal],
    [
      "invalid step input (zod)",
      (() => {
        try {
          z.object({ runId: z.string() }).parse({});
        } catch (e) {
          return e;
        }
      })(),
      StepErrorCode.InvalidInput,
    ],
    ["a caller mistake", new BadRequestError("no such run"), StepErrorCode.InvalidInput],
    ["the agent gave up", new AgentError("three malformed replies"), StepErrorCode.AgentFailed],
    ["a plain bug", new TypeError("x is undefined"), StepErrorCode.Internal],
  ])("%s → its code, as the error's name", (_what, error, code) => {
    const stepError = toStepError(error);
    expect(stepError).toBeInstanceOf(StepError);
    expect(stepError.name).toBe(code);
    expect(stepError.retryable).toBe(RETRYABLE_STEP_ERRORS.includes(code));
    expect(stepError.cause).toBe(error);
  });

  it("keeps a StepError as it is", () => {
    const error = new StepError(StepErrorCode.OutOfTime, "late");
    expect(toStepError(error)).toBe(error);
  });
});

describe("model errors, after the client's own retries", () => {
  let scripted: ScriptedModel;
  let steps: ScriptStep[];
  beforeAll(async () => {
    scripted = await startScriptedModel(() => steps.shift() ?? { status: 400 });
  });
  afterAll(() => scripted?.close());
  const model = () => new OpenAIModel({ model: "scripted", baseURL: scripted.url, apiKey: "test", maxRetries: 0, timeoutMs: 30_000 });

  it.each([
    [429, StepErrorCode.ModelUnavailable],
    [503, StepErrorCode.ModelUnavailable],
    [400, StepErrorCode.ModelRejected],
    [401, StepErrorCode.ModelRejected],
  ])("HTTP %i → %s", async (status, code) => {
    steps = [{ status }];
    const error = await model()
      .complete({ messages: [{ role: "user", content: "hi" }] })
      .catch((e) => e);
    expect(error).toBeInstanceOf(StepError);
    expect(error.name).toBe(code);
  });

  it("a call still running at the Lambda's deadline is aborted with Stepwise.OutOfTime", async () => {
    steps = [{ hang: true }];
    const error = await withDeadline(model(), Date.now() + 300)
      .complete({ messages: [{ role: "user", content: "hi" }] })
      .catch((e) => e);
    expect(error).toBeInstanceOf(StepError);
    expect(error.name).toBe(StepErrorCode.OutOfTime);
  });

  it("a call that ends in time is not touched by the deadline", async () => {
    steps = [{ text: "Hello." }];
    const reply = await withDeadline(model(), Date.now() + 20_000).complete({ messages: [{ role: "user", content: "hi" }] });
    expect(reply.content).toBe("Hello.");
  });
});
