import { readFileSync } from "node:fs";
import type { CfnElement } from "aws-cdk-lib";
import { App, type Stack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";
import { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import { StepwiseStack, type StepwiseStackProps } from "../../infra/aws/stack.js";
import { StepwiseFunction } from "../../infra/aws/stepwiseFunction.js";

/** A complete ARN, as Secrets Manager gives it (name + 6-character suffix). */
export const MODEL_KEY_SECRET_ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:stepwise/model-key-AbCdEf";

/** cdk.json's context (its feature flags): what `cdk synth` gives the app. */
export const CDK_JSON_CONTEXT = (
  JSON.parse(readFileSync(new URL("../../cdk.json", import.meta.url), "utf8")) as { context: Record<string, unknown> }
).context;

/**
 * The stack as `cdk synth` builds it (cdk.json's flags), without bundling the Lambda code (offline and
 * fast), and without aws-cdk-lib's CloudFormation template check: a WebAssembly engine that costs
 * ~14 s of CPU at a process's first synth and 2 s at each after, and only reports (not read here).
 */
export function synthesize(
  props: StepwiseStackProps = { openAiApiKeySecretArn: MODEL_KEY_SECRET_ARN },
  context: Record<string, unknown> = {},
  beforeSynth: (stack: StepwiseStack) => void = () => undefined,
) {
  const app = new App({
    context: { ...CDK_JSON_CONTEXT, "aws:cdk:bundling-stacks": [], ...context },
    builtinCloudFormationValidation: false,
  });
  const stack = new StepwiseStack(app, "Stepwise", { env: { account: "123456789012", region: "eu-west-1" }, ...props });
  beforeSynth(stack);
  return { app, stack, template: Template.fromStack(stack) };
}

export interface FunctionOfStack {
  /** Construct path, e.g. "Stepwise/Steps/AwaitInterrupt". */
  path: string;
  logicalId: string;
  roleLogicalId: string;
  /** The handler module, when the function runs Stepwise code. */
  entry?: string;
  /** A NodejsFunction not built with StepwiseFunction: its code cannot be found. */
  unknownCode: boolean;
}

/** Every Lambda function in the stack (also CDK's own helper functions, which run no Stepwise code). */
export function functionsOf(stack: Stack): FunctionOfStack[] {
  return stack.node
    .findAll()
    .filter((c): c is LambdaFunction => c instanceof LambdaFunction)
    .map((fn) => ({
      path: fn.node.path,
      logicalId: stack.getLogicalId(fn.node.defaultChild as CfnElement),
      roleLogicalId: stack.getLogicalId(fn.role!.node.defaultChild as CfnElement),
      entry: fn instanceof StepwiseFunction ? fn.entryFile : undefined,
      unknownCode: fn instanceof NodejsFunction && !(fn instanceof StepwiseFunction),
    }));
}

/** Every action the role's policies allow (its inline policies and the policies attached to it). */
export function allowedActions(template: Template, roleLogicalId: string): string[] {
  const resources = template.toJSON().Resources as Record<string, { Type: string; Properties?: any }>;
  const documents: any[] = [];
  for (const resource of Object.values(resources)) {
    if (resource.Type === "AWS::IAM::Policy" && (resource.Properties.Roles ?? []).some((r: any) => r.Ref === roleLogicalId))
      documents.push(resource.Properties.PolicyDocument);
  }
  for (const policy of resources[roleLogicalId]?.Properties?.Policies ?? []) documents.push(policy.PolicyDocument);
  return documents
    .flatMap((d) => d.Statement)
    .filter((s: any) => s.Effect === "Allow")
    .flatMap((s: any) => [s.Action].flat());
}

/** The secrets whose values the role may read (secretsmanager:GetSecretValue), by ARN. */
export function readableSecrets(template: Template, roleLogicalId: string): string[] {
  const resources = template.toJSON().Resources as Record<string, { Type: string; Properties?: any }>;
  return Object.values(resources)
    .filter((r) => r.Type === "AWS::IAM::Policy" && (r.Properties.Roles ?? []).some((role: any) => role.Ref === roleLogicalId))
    .flatMap((r) => r.Properties.PolicyDocument.Statement)
    .filter((s: any) => s.Effect === "Allow" && [s.Action].flat().includes("secretsmanager:GetSecretValue"))
    .flatMap((s: any) => [s.Resource].flat())
    .sort();
}
