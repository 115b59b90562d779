import { Duration } from "aws-cdk-lib";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { Construct } from "constructs";
import { STEP_HANDLERS, type StepName } from "./handlers.js";
import { StepwiseFunction } from "./stepwiseFunction.js";

export { lambdaProps } from "./stepwiseFunction.js";

export interface AgentFunctionsProps {
  readonly table: ITable;
  readonly environment: Record<string, string>;
}

/** One Lambda per state machine Task, each with up to 15 minutes for its agent turn. */
export class AgentFunctions extends Construct {
  readonly functions: Record<StepName, StepwiseFunction>;

  constructor(scope: Construct, id: string, props: AgentFunctionsProps) {
    super(scope, id);
    const entries = Object.entries(STEP_HANDLERS) as [StepName, string][];
    this.functions = Object.fromEntries(
      entries.map(([name, entry]) => {
        const fn = new StepwiseFunction(this, name, { entry, table: props.table, environment: props.environment, timeout: Duration.minutes(15) });
        props.table.grantReadWriteData(fn);
        return [name, fn];
      }),
    ) as Record<StepName, StepwiseFunction>;
  }
}
