import type { CfnElement } from "aws-cdk-lib";
import { App, Duration } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import type { StepName } from "../aws/handlers.js";
import { StepwiseStack, type StepwiseStackProps } from "../aws/stack.js";

import { LOCAL_ACCOUNT, LOCAL_REGION } from "./account.js";
import type { StateMachineSettings } from "./definitionCache.js";
import { FIRST_VERSION } from "./versions.js";

type CfnValue = string | { "Fn::GetAtt"?: [string, string]; Ref?: string };
interface CfnTemplate {
  Resources: Record<string, { Type: string; Properties?: { FunctionName?: { Ref?: string }; DefinitionString?: unknown } }>;
}

export interface SynthesizedStack {
  template: CfnTemplate;
  /** Lambda logical id → the step it runs. */
  steps: Map<string, StepName>;
}

export interface LocalDefinition {
  /** The state machine's ASL, tokens resolved to local ARNs. */
  definition: string;
  /** Lambda ARN in the definition (version-qualified) → the step it runs. */
  functions: Map<string, StepName>;
}

/** Synthesizes the stack offline, as `cdk synth` does, without bundling the Lambda code. */
export function synthesizeStack(props: StepwiseStackProps = {}): SynthesizedStack {
  // Without aws-cdk-lib's CloudFormation template check (a WebAssembly engine: ~14 s of CPU at its
  // first synth in a process, 2 s at each after): it only reports, and the definition taken from
  // here is validated as Step Functions would (definitionCache.ts); `cdk synth` and deploys keep it.
  const app = new App({ context: { "aws:cdk:bundling-stacks": [] }, builtinCloudFormationValidation: false });
  // The model endpoint only sets the functions' environment, which the local stack sets itself.
  const stack = new StepwiseStack(app, "Stepwise", { openAiBaseUrl: "http://127.0.0.1/v1", ...props });
  const steps = new Map(
    Object.entries(stack.steps.functions).map(([name, fn]) => [stack.getLogicalId(fn.node.defaultChild as CfnElement), name as StepName]),
  );
  return { template: Template.fromStack(stack).toJSON() as CfnTemplate, steps };
}

/**
 * The state machine definition exactly as CloudFormation would produce it: the synthesized
 * DefinitionString's Fn::Join with each function reference replaced by a local ARN.
 */
export function stateMachineDefinition({ template, steps }: SynthesizedStack): LocalDefinition {
  const machines = Object.values(template.Resources).filter((r) => r.Type === "AWS::StepFunctions::StateMachine");
  if (machines.length !== 1) throw new Error(`expected one state machine in the template, found ${machines.length}`);
  const functions = new Map<string, StepName>();
  const resolve = (value: CfnValue): string => {
    if (typeof value === "string") return value;
    if (value.Ref === "AWS::Partition") return "aws";
    if (value.Ref === "AWS::Region") return LOCAL_REGION;
    if (value.Ref === "AWS::AccountId") return LOCAL_ACCOUNT;
    const logicalId = value["Fn::GetAtt"]?.[0] ?? value.Ref;
    // A published version names its function; locally the version a deploy publishes first is 1.
    const version = logicalId ? template.Resources[logicalId] : undefined;
    const functionId = version?.Type === "AWS::Lambda::Version" ? version.Properties?.FunctionName?.Ref : logicalId;
    const step = functionId ? steps.get(functionId) : undefined;
    if (!functionId || !step) throw new Error(`cannot resolve ${JSON.stringify(value)} locally`);
    const arn = `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${functionId}${functionId === logicalId ? "" : `:${FIRST_VERSION}`}`;
    functions.set(arn, step);
    return arn;
  };
  const body = machines[0].Properties?.DefinitionString as string | { "Fn::Join": [string, CfnValue[]] } | undefined;
  if (body === undefined) throw new Error("the state machine in the template has no DefinitionString");
  const definition = typeof body === "string" ? body : body["Fn::Join"][1].map(resolve).join(body["Fn::Join"][0]);
  return { definition, functions };
}

/** Synthesizes the stack with these settings and resolves its definition for the local stack. */
export async function synthesizeFresh(settings: StateMachineSettings): Promise<LocalDefinition> {
  return stateMachineDefinition(
    synthesizeStack({
      interruptTimeout: settings.interruptTimeoutSeconds !== undefined ? Duration.seconds(settings.interruptTimeoutSeconds) : undefined,
      maxConcurrency: settings.maxConcurrency,
    }),
  );
}
