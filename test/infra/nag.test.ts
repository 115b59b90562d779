import { App, Validations } from "aws-cdk-lib";
import { Queue } from "aws-cdk-lib/aws-sqs";
import { AwsSolutionsChecks } from "cdk-nag";
import { describe, expect, it } from "vitest";
import { StepwiseStack, type StepwiseStackProps } from "../../infra/aws/stack.js";
import { MODEL_KEY_SECRET_ARN } from "../support/template.js";

/**
 * cdk-nag's AWS Solutions checks over the whole app: synth fails on any finding that is not
 * acknowledged, and every acknowledgment carries a reason (infra/aws/nag.ts).
 */
function synthWithNag(props: StepwiseStackProps, extra: (stack: StepwiseStack) => void = () => undefined): () => void {
  // aws-cdk-lib's own CloudFormation template check off (test/support/template.ts says why): cdk-nag's are the ones asserted.
  const app = new App({ context: { "aws:cdk:bundling-stacks": [] }, builtinCloudFormationValidation: false });
  const stack = new StepwiseStack(app, "Stepwise", { env: { account: "123456789012", region: "eu-west-1" }, ...props });
  extra(stack);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return () => app.synth();
}

/** A whole synth with every check: ~5 s on a quiet machine, over 100 s seen on a loaded one. */
const SYNTH_TIMEOUT_MS = 300_000;

describe("cdk-nag AwsSolutionsChecks", () => {
  it.each([
    ["with a model key secret and an alarm topic", { openAiApiKeySecretArn: MODEL_KEY_SECRET_ARN, alarmEmail: "ops@example.com" }],
    ["with a keyless model endpoint", { openAiBaseUrl: "https://models.example.com/v1" }],
  ])(
    "%s: no finding is left unacknowledged",
    (_what, props) => {
      expect(synthWithNag(props)).not.toThrow();
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    "the checks do run: a queue without SSL enforcement fails synth, naming the rule",
    () => {
      const synth = synthWithNag(
        { openAiBaseUrl: "https://models.example.com/v1" },
        (stack) => new Queue(stack, "Careless", { enforceSSL: false }),
      );
      expect(synth).toThrow(/AwsSolutions-SQS4/);
    },
    SYNTH_TIMEOUT_MS,
  );
});
