import { Duration } from "aws-cdk-lib";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { Architecture, Runtime } from "aws-cdk-lib/aws-lambda";
import { NodejsFunction, OutputFormat, type NodejsFunctionProps } from "aws-cdk-lib/aws-lambda-nodejs";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { STEP_HANDLERS, type StepName } from "./handlers.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Defaults every Stepwise Lambda shares: Node 22 on arm64, ESM bundles, the table's name. */
export function lambdaProps(scope: Construct, id: string, entry: string, table: ITable, environment: Record<string, string>): NodejsFunctionProps {
  return {
    logGroup: new LogGroup(scope, `${id}Logs`, { retention: RetentionDays.ONE_MONTH }),
    entry: path.join(root, entry),
    handler: "handler",
    runtime: Runtime.NODEJS_22_X,
    architecture: Architecture.ARM_64,
    memorySize: 1024,
    environment: { TABLE_NAME: table.tableName, NODE_OPTIONS: "--enable-source-maps", ...environment },
    bundling: {
      format: OutputFormat.ESM,
      target: "node22",
      sourceMap: true,
      mainFields: ["module", "main"],
      // Some dependencies still call require(); give ESM bundles one.
      banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
    },
  };
}

export interface AgentFunctionsProps {
  readonly table: ITable;
  readonly environment: Record<string, string>;
}

/** One Lambda per state machine Task, each with up to 15 minutes for its agent turn. */
export class AgentFunctions extends Construct {
  readonly functions: Record<StepName, NodejsFunction>;

  constructor(scope: Construct, id: string, props: AgentFunctionsProps) {
    super(scope, id);
    const entries = Object.entries(STEP_HANDLERS) as [StepName, string][];
    this.functions = Object.fromEntries(
      entries.map(([name, entry]) => {
        const fn = new NodejsFunction(this, name, { ...lambdaProps(this, name, entry, props.table, props.environment), timeout: Duration.minutes(15) });
        props.table.grantReadWriteData(fn);
        return [name, fn];
      }),
    ) as Record<StepName, NodejsFunction>;
  }
}
