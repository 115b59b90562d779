import { Duration, RemovalPolicy } from "aws-cdk-lib";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import type { LayerVersion } from "aws-cdk-lib/aws-lambda";
import { Construct } from "constructs";
import { AGENT_STEPS, STEP_HANDLERS, type StepName } from "./handlers.js";
import { policyEngineLayer } from "./policyEngineLayer.js";
import { StepwiseFunction } from "./stepwiseFunction.js";
import { tokenizerLayer } from "./tokenizerLayer.js";
import { workProductsLayer } from "./workProductsLayer.js";

export interface AgentFunctionsProps {
  readonly table: ITable;
  /** Each step function's environment (infra/aws/handlerAccess.ts derives it from what the step uses). */
  readonly environmentOf: (step: StepName) => Record<string, string>;
  /** Memory of the steps that run an agent (512 MB by default). */
  readonly agentMemoryMb?: number;
}

/** A deploy publishes a version of each step function; the versions before it stay for the runs that started on them. */
const RETAINED = { removalPolicy: RemovalPolicy.RETAIN };

/** One Lambda per state machine Task, each with up to 15 minutes for its agent turn. */
export class AgentFunctions extends Construct {
  readonly functions: Record<StepName, StepwiseFunction>;
  /** The token counter's rank tables, for the steps that run an agent. */
  readonly tokenizer: LayerVersion;
  /** The work products' libraries (documents, charts, slides), for the steps that run an agent. */
  readonly workProducts: LayerVersion;
  /** The tool policies' engine (Cedar), for the steps that run an agent and the API that checks policies. */
  readonly policyEngine: LayerVersion;

  constructor(scope: Construct, id: string, props: AgentFunctionsProps) {
    super(scope, id);
    this.tokenizer = tokenizerLayer(this, "Tokenizer");
    this.workProducts = workProductsLayer(this, "WorkProducts");
    this.policyEngine = policyEngineLayer(this, "PolicyEngine");
    const entries = Object.entries(STEP_HANDLERS) as [StepName, string][];
    const runsAgent = new Set<StepName>(AGENT_STEPS);
    this.functions = Object.fromEntries(
      entries.map(([name, entry]) => {
        const layers = runsAgent.has(name) ? [this.tokenizer, this.workProducts, this.policyEngine] : [];
        const fn = new StepwiseFunction(this, name, {
          entry,
          table: props.table,
          environment: props.environmentOf(name),
          timeout: Duration.minutes(15),
          overrides: {
            layers,
            currentVersionOptions: RETAINED,
            ...(runsAgent.has(name) && props.agentMemoryMb ? { memorySize: props.agentMemoryMb } : {}),
          },
        });
        return [name, fn];
      }),
    ) as Record<StepName, StepwiseFunction>;
  }
}
