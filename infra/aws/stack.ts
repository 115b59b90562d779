import { Stack, type StackProps } from "aws-cdk-lib";
import type { Construct } from "constructs";
import type { AgentFunctions } from "./agentFunctions.js";
import { Stepwise, type StepwiseProps } from "./stepwise.js";

export interface StepwiseStackProps extends StackProps, StepwiseProps {}

/** `cdk deploy`'s stack: only the Stepwise construct. */
export class StepwiseStack extends Stack {
  readonly stepwise: Stepwise;
  readonly steps: AgentFunctions;

  constructor(scope: Construct, id: string, props: StepwiseStackProps = {}) {
    super(scope, id, props);
    this.stepwise = new Stepwise(this, "Stepwise", props);
    this.steps = this.stepwise.steps;
  }
}
