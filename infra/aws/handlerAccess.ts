import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { Policy, PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { IKey } from "aws-cdk-lib/aws-kms";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import type { ISecret } from "aws-cdk-lib/aws-secretsmanager";
import type { IQueue } from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import type { ExecutionAction, HandlerUses } from "../../functions/uses.js";
import type { ToolGrant } from "../../shared/contracts/toolGrants.js";
import type { PortName } from "../../shared/handlerPorts.js";
import type { ToolResources } from "./toolResources.js";

/** The DynamoDB actions Stepwise code uses (no Scan, no streams); the IAM-coverage test checks each role. */
export const TABLE_ACTIONS = [
  "dynamodb:GetItem",
  "dynamodb:BatchGetItem",
  "dynamodb:Query",
  "dynamodb:PutItem",
  "dynamodb:UpdateItem",
  "dynamodb:DeleteItem",
  "dynamodb:BatchWriteItem",
  "dynamodb:ConditionCheckItem",
];

/** The ports whose adapters keep their records in the table (the tool catalog reads the tool sources there). */
const ON_TABLE: readonly PortName[] = [
  "table",
  "runs",
  "events",
  "journal",
  "tasks",
  "interrupts",
  "files",
  "transfers",
  "tools",
  "activeRuns",
  "sessions",
  "webhooks",
  "idempotency",
  "savedAgents",
  "snapshots",
  "apiKeys",
  "listings",
  "streamTokens",
  "tenantLeases",
  "tenantSettings",
  "toolSources",
];

/** Each execution action's IAM action; `start` is allowed on the state machine and its alias, `continue` on its versions, `resume` on the state machine, the others on its executions. */
const EXECUTION_ACTIONS: Record<ExecutionAction, string> = {
  start: "states:StartExecution",
  continue: "states:StartExecution",
  describe: "states:DescribeExecution",
  stop: "states:StopExecution",
  redrive: "states:RedriveExecution",
  resume: "states:SendTaskSuccess",
  history: "states:GetExecutionHistory",
};

/** The Step Functions API calls the handlers make, each once, by their names (as `AWS/States` metrics name them). */
export const STEP_FUNCTIONS_APIS = [...new Set(Object.values(EXECUTION_ACTIONS).map((action) => action.replace("states:", "")))];

/** The stack's resources a handler may be given. */
export interface HandlerResources {
  readonly table: ITable;
  readonly tools: ToolResources;
  readonly notifications: IQueue;
  readonly deadLetters: IQueue;
  readonly toolSourceKey: IKey;
  /** The secrets holding the model's API key and the search API's (when the deployment uses them). */
  readonly modelKey?: ISecret;
  /** The key of a separate moderation endpoint (the guardrails' moderation checks). */
  readonly moderationKey?: ISecret;
  readonly searchKey?: ISecret;
  /** What the agents' tools declare they need (shared/contracts/toolGrants.ts). */
  readonly toolGrants: readonly ToolGrant[];
  /** The deployment's settings as variables (infra/aws/config.ts). */
  readonly settingsEnvironment: Record<string, string>;
}

const uses = (handler: HandlerUses, ...ports: PortName[]) => ports.some((port) => handler.ports.includes(port));

/**
 * A handler's environment: the deployment's settings, and the address of each resource its ports
 * use (the table, the files bucket, the queues, the key, the sandbox; the state machine where it is
 * known, i.e. not for the steps the state machine itself invokes). The model's key is named only to
 * the functions that call the model.
 */
export function environmentFor(handler: HandlerUses, r: HandlerResources, stateMachineArn?: string): Record<string, string> {
  const { OPENAI_API_KEY_SECRET_ARN: modelKeyArn, MODERATION_API_KEY_SECRET_ARN: moderationKeyArn, ...settings } = r.settingsEnvironment;
  const { FILES_BUCKET, SANDBOX_FUNCTION_NAME, CODE_INTERPRETER_ID, ...always } = r.tools.environment;
  return {
    TABLE_NAME: r.table.tableName,
    ...settings,
    ...always,
    ...(uses(handler, "model") && modelKeyArn ? { OPENAI_API_KEY_SECRET_ARN: modelKeyArn } : {}),
    ...(uses(handler, "model") && moderationKeyArn ? { MODERATION_API_KEY_SECRET_ARN: moderationKeyArn } : {}),
    ...(uses(handler, "files", "transfers", "tools") && FILES_BUCKET ? { FILES_BUCKET } : {}),
    ...(uses(handler, "tools") && SANDBOX_FUNCTION_NAME ? { SANDBOX_FUNCTION_NAME } : {}),
    ...(uses(handler, "tools") && CODE_INTERPRETER_ID ? { CODE_INTERPRETER_ID } : {}),
    ...(uses(handler, "tools", "secrets") ? { TOOL_SOURCES_KMS_KEY_ID: r.toolSourceKey.keyArn } : {}),
    ...(uses(handler, "notifyQueue") ? { NOTIFY_QUEUE_URL: r.notifications.queueUrl, DEAD_LETTER_QUEUE_URL: r.deadLetters.queueUrl } : {}),
    ...(uses(handler, "executions") && stateMachineArn ? { STATE_MACHINE_ARN: stateMachineArn } : {}),
  };
}

/** Grants a handler's function what its ports use, and nothing else (the state machine's actions apart: grantExecutions). */
export function grantUses(fn: IFunction, handler: HandlerUses, r: HandlerResources): void {
  if (uses(handler, ...ON_TABLE)) r.table.grant(fn, ...TABLE_ACTIONS);
  if ((uses(handler, "files", "transfers") && !handler.fileRecordsOnly) || handler.runsTools) r.tools.grantFiles(fn);
  if (uses(handler, "notifyQueue")) r.notifications.grantSendMessages(fn);
  if (handler.deadLetters) r.deadLetters.grantSendMessages(fn);
  if (uses(handler, "model")) r.modelKey?.grantRead(fn);
  if (uses(handler, "model")) r.moderationKey?.grantRead(fn);
  // Listing a tenant's MCP tools connects with its sealed headers: opening them is Decrypt.
  // The notifier opens an A2A push's sealed token: Decrypt only.
  if ((uses(handler, "tools") && !uses(handler, "secrets")) || (uses(handler, "secrets") && handler.opensSecretsOnly))
    r.toolSourceKey.grantDecrypt(fn);
  // Sealing is envelope encryption (GenerateDataKey), opening is Decrypt: nothing else on the key.
  else if (uses(handler, "secrets")) r.toolSourceKey.grant(fn, "kms:GenerateDataKey", "kms:Decrypt");
  if (handler.runsTools) {
    r.searchKey?.grantRead(fn);
    r.tools.grantTools(fn, r.toolGrants);
  }
}

/**
 * The state machine actions a handler names, as its own policy: the step functions exist before
 * the state machine that invokes them, and a grant in their default policy would make a cycle.
 */
export function grantExecutions(
  scope: Construct,
  id: string,
  fn: IFunction,
  handler: HandlerUses,
  machine: { stateMachineArn: string; aliasArn: string; executionsArn: string },
): void {
  const actions = handler.executions ?? [];
  if (actions.length === 0) return;
  if (!fn.role) throw new Error(`${fn.node.path} has no execution role`);
  const onExecutions = actions.filter((a) => a !== "start" && a !== "continue" && a !== "resume").map((a) => EXECUTION_ACTIONS[a]);
  const statements = [
    // New runs start through the alias, so they run on the last deploy's versions. Step Functions
    // authorizes a call through an alias on the state machine's ARN, and a qualified ARN in a policy
    // scopes it down to that alias: both are named.
    ...(actions.includes("start")
      ? [new PolicyStatement({ actions: [EXECUTION_ACTIONS.start], resources: [machine.stateMachineArn, machine.aliasArn] })]
      : []),
    // A continuation starts on the version its run's execution runs: any of the state machine's
    // versions (arn:…:stateMachine:Name:N), the alias for executions started without one.
    ...(actions.includes("continue")
      ? [
          new PolicyStatement({
            actions: [EXECUTION_ACTIONS.continue],
            resources: [machine.stateMachineArn, `${machine.stateMachineArn}:*`],
          }),
        ]
      : []),
    ...(actions.includes("resume")
      ? [new PolicyStatement({ actions: [EXECUTION_ACTIONS.resume], resources: [machine.stateMachineArn] })]
      : []),
    ...(onExecutions.length ? [new PolicyStatement({ actions: onExecutions, resources: [machine.executionsArn] })] : []),
  ];
  new Policy(scope, `${id}Executions`, { roles: [fn.role], statements });
}
