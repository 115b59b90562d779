import { Aws, Duration, Fn, RemovalPolicy } from "aws-cdk-lib";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { Alias, type IVersion, type Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import * as sfn from "aws-cdk-lib/aws-stepfunctions";
import { LambdaInvoke } from "aws-cdk-lib/aws-stepfunctions-tasks";
import { Construct } from "constructs";
import { FINAL_STEP_ERRORS, RETRYABLE_STEP_ERRORS } from "../../shared/errors.js";
import { LIVE_ALIAS } from "../../shared/store/stepFunctions.js";
import type { StepName } from "./handlers.js";

/**
 * Retries for every Task. Steps replay their journal, so repeating one is safe; permanent errors
 * (Stepwise.ModelRejected, Stepwise.InvalidInput, Stepwise.AgentFailed, Stepwise.Internal) are not
 * listed and go straight to the Catch. Full jitter spreads retries of parallel executors apart.
 */
const STEP_RETRIES: sfn.RetryProps[] = [
  {
    // Lambda could not run the function (throttled, service hiccup).
    errors: [
      "Lambda.ClientExecutionTimeoutException",
      "Lambda.ServiceException",
      "Lambda.AWSLambdaException",
      "Lambda.SdkClientException",
      "Lambda.TooManyRequestsException",
    ],
    interval: Duration.seconds(2),
    maxAttempts: 6,
    backoffRate: 2,
    maxDelay: Duration.minutes(1),
    jitterStrategy: sfn.JitterType.FULL,
  },
  {
    // The function died without an answer (out of memory, timed out): once more, from the journal.
    errors: ["Lambda.Unknown", "Sandbox.Timedout"],
    interval: Duration.seconds(5),
    maxAttempts: 2,
    backoffRate: 2,
    jitterStrategy: sfn.JitterType.FULL,
  },
  {
    // Our own transient errors: the model busy or unreachable, AWS throttling, time out mid-call.
    errors: [...RETRYABLE_STEP_ERRORS],
    interval: Duration.seconds(5),
    maxAttempts: 5,
    backoffRate: 2,
    maxDelay: Duration.minutes(2),
    jitterStrategy: sfn.JitterType.FULL,
  },
];

export interface OrchestrationProps {
  readonly functions: Record<StepName, LambdaFunction>;
  /** Executors running at once in "Execute tasks" (an inline Map allows at most 40). */
  readonly maxConcurrency?: number;
  /** How long a run waits for a person's decision before it ends timed_out. */
  readonly interruptTimeout?: Duration;
}

/**
 * THE state machine: the single source of truth for how a run moves. State names are plain
 * sentences because users read them in the Step Functions console; every state's input and output
 * is a small JSON of ids and control fields (messages and results live in DynamoDB).
 */
export class Orchestration extends Construct {
  readonly stateMachine: sfn.StateMachine;
  /** The state machine's version this deploy published (kept after later deploys, for the runs on it). */
  readonly version: sfn.CfnStateMachineVersion;
  /** The alias new runs start through; it points at this deploy's version. */
  readonly alias: sfn.CfnStateMachineAlias;
  /** The alias's ARN: what the API starts executions with. */
  readonly aliasArn: string;

  constructor(scope: Construct, id: string, props: OrchestrationProps) {
    super(scope, id);
    const maxConcurrency = props.maxConcurrency ?? 8;
    if (!Number.isInteger(maxConcurrency) || maxConcurrency < 1 || maxConcurrency > 40) {
      throw new Error(`maxConcurrency must be an integer from 1 to 40, got ${maxConcurrency}`);
    }
    // Deploys leave running runs alone: each deploy publishes every step function as a version
    // (kept when the next deploy publishes another) and the definition names those versions, so an
    // execution calls the code it started with, however long it waits for a person.
    const versions = Object.fromEntries(
      Object.entries(props.functions).map(([name, fn]) => {
        const version = fn.currentVersion;
        new Alias(fn, "Live", { aliasName: LIVE_ALIAS, version });
        return [name, version as IVersion];
      }),
    ) as Record<StepName, IVersion>;
    const withRetries = <T extends sfn.TaskStateBase>(task: T): T => {
      for (const retry of STEP_RETRIES) task.addRetry(retry);
      return task;
    };
    const step = (name: string, fn: StepName, comment: string, options: { resultPath?: string } = {}) =>
      withRetries(
        new LambdaInvoke(this, name, {
          lambdaFunction: versions[fn],
          payloadResponseOnly: true,
          retryOnServiceExceptions: false, // STEP_RETRIES has them, with jitter
          // A turn hands back to the state machine before Lambda's 15-minute limit; never wait longer.
          taskTimeout: sfn.Timeout.duration(Duration.minutes(15)),
          resultPath: options.resultPath,
          comment,
        }),
      );

    // Human in the loop: the run waits on a task token (no compute) until the API resumes it.
    const waitFor = (name: string, comment: string) =>
      withRetries(
        new LambdaInvoke(this, name, {
          lambdaFunction: versions.AwaitInterrupt,
          integrationPattern: sfn.IntegrationPattern.WAIT_FOR_TASK_TOKEN,
          payload: sfn.TaskInput.fromObject({
            runId: sfn.JsonPath.stringAt("$.runId"),
            interruptId: sfn.JsonPath.stringAt("$.interruptId"),
            taskToken: sfn.JsonPath.taskToken,
          }),
          taskTimeout: sfn.Timeout.duration(props.interruptTimeout ?? Duration.hours(24)),
          resultPath: "$.resolution",
          retryOnServiceExceptions: false,
          comment,
        }),
      );
    const recordTimeout = step("Record timeout", "RecordTimeout", "Nobody decided in time: the run ends timed_out.");
    recordTimeout.next(new sfn.Fail(this, "Run timed out", { error: "RunTimedOut", cause: "A decision did not arrive in time." }));
    const onTimeout = { errors: ["States.Timeout"], resultPath: "$.error" };

    // Only errors no later attempt can change end the run here. The error stays in the state
    // ($.error), so "Run failed" shows the real one: the console's failure panel and the EventBridge
    // event carry its code and readable cause. Any other error, once retried, fails the execution at
    // its own state: the notifier ends the run from the execution's status change, and a redrive
    // (POST /v1/runs/{id}/resume) runs that state again, which a catch path would not allow.
    const recordFailure = step("Record failure", "RecordFailure", "An error no retry can change: the run ends failed with its reason.", {
      resultPath: "$.failure",
    });
    recordFailure.next(new sfn.Fail(this, "Run failed", { errorPath: "$.failure.error", causePath: "$.failure.cause" }));
    const onError = { errors: [...FINAL_STEP_ERRORS], resultPath: "$.error" };

    const startRun = step("Start run", "StartRun", "Marks the run running and resolves its mode.");
    const chooseMode = new sfn.Choice(this, "Choose mode");
    const routeRequest = step("Route request", "RouteRequest", "The router model picks react or plan_solve.");

    const agentTurn = step("Agent turn", "AgentTurn", "ReAct: think/act rounds until the answer or the turn's time budget.");
    const agentFinished = new sfn.Choice(this, "Agent finished?");
    const waitForInput = waitFor("Wait for input", "The agent asked the user, or a tool call needs approval.");

    const plan = step("Plan", "Plan", "The planner revises the plan from the last results and picks the next step's tasks.");
    const nextStep = new sfn.Choice(this, "More tasks to run?");
    const waitForPlanApproval = waitFor("Wait for plan approval", "A person approves or rejects the plan.");

    const executeTask = step("Execute task", "ExecuteTask", "One executor agent solves one task with tools.");
    const recordTaskFailure = step("Record task failure", "RecordTaskFailure", "The executor crashed: the task fails, the run goes on.");
    // A task's failure of any kind ends that task, not the run: the planner sees it and goes on.
    executeTask.addCatch(recordTaskFailure, { resultPath: "$.error" });
    const waitForToolApproval = waitFor("Wait for tool approval", "A person approves, edits or rejects this executor's tool call.");
    const taskFinished = new sfn.Choice(this, "Task finished?")
      // The history budget: this execution could not hold the task's hand-back; "Plan" hands the task on.
      .when(sfn.Condition.isPresent("$.deferred"), new sfn.Succeed(this, "Task goes on in the next execution"))
      .when(sfn.Condition.isPresent("$.interruptId"), waitForToolApproval.next(executeTask))
      .when(sfn.Condition.booleanEquals("$.done", false), executeTask)
      .otherwise(new sfn.Succeed(this, "Task done"));

    // The history budget (shared/contracts/historyBudget.ts): the plan's next tasks (or a ReAct run's next
    // turn) run in the run's next execution, and this one ends. "Start run" there hands them on.
    const continueRun = withRetries(
      new LambdaInvoke(this, "Continue in a new execution", {
        lambdaFunction: versions.ContinueRun,
        payload: sfn.TaskInput.fromObject({ state: sfn.JsonPath.entirePayload, executionArn: sfn.JsonPath.executionId }),
        payloadResponseOnly: true,
        retryOnServiceExceptions: false,
        resultPath: "$.continuation",
        comment: "This execution's history is nearly full: the run goes on in a new execution.",
      }),
    );
    continueRun.next(new sfn.Succeed(this, "Continued in a new execution"));

    const executeTasks = new sfn.Map(this, "Execute tasks", {
      itemsPath: "$.tasks",
      itemSelector: {
        "runId.$": "$.runId",
        "iteration.$": "$.iteration",
        "task.$": "$$.Map.Item.Value",
        // What an executor's hand-back weighs against the history budget.
        "executionArn.$": "$$.Execution.Id",
        "tasks.$": "States.ArrayLength($.tasks)",
      },
      maxConcurrency,
      resultPath: "$.taskResults",
      comment: "The step's tasks run in parallel, one executor each.",
    });
    executeTasks.itemProcessor(executeTask.next(taskFinished));

    const summarize = step("Summarize", "Summarize", "The summarizer writes the answer from the task results.");
    const finalize = step("Finalize", "Finalize", "Marks the run succeeded with its answer.");
    finalize.next(new sfn.Succeed(this, "Run succeeded"));

    for (const state of [waitForInput, waitForPlanApproval, executeTasks]) state.addCatch(recordTimeout, onTimeout);
    for (const state of [
      startRun,
      routeRequest,
      agentTurn,
      plan,
      executeTasks,
      summarize,
      finalize,
      waitForInput,
      waitForPlanApproval,
      recordTimeout,
      continueRun,
    ]) {
      state.addCatch(recordFailure, onError);
    }

    const definition = startRun.next(
      chooseMode
        // A run's next execution starts with the tasks its last Plan chose.
        .when(sfn.Condition.isPresent("$.tasks"), executeTasks)
        .when(
          sfn.Condition.stringEquals("$.mode", "react"),
          agentTurn.next(
            agentFinished
              .when(sfn.Condition.isPresent("$.next"), continueRun)
              .when(sfn.Condition.isPresent("$.interruptId"), waitForInput.next(agentTurn))
              .when(sfn.Condition.booleanEquals("$.done", true), finalize)
              .otherwise(agentTurn),
          ),
        )
        .when(
          sfn.Condition.stringEquals("$.mode", "plan_solve"),
          plan.next(
            nextStep
              .when(sfn.Condition.stringEquals("$.next", "approve"), waitForPlanApproval.next(plan))
              .when(sfn.Condition.stringEquals("$.next", "execute"), executeTasks.next(plan))
              .when(sfn.Condition.stringEquals("$.next", "new_execution"), continueRun)
              .otherwise(summarize.next(finalize)),
          ),
        )
        .when(sfn.Condition.stringEquals("$.mode", "route"), routeRequest.next(chooseMode))
        .when(sfn.Condition.stringEquals("$.mode", "answer"), finalize)
        // A guardrail blocked the input: the run has ended already.
        .when(sfn.Condition.stringEquals("$.mode", "ended"), new sfn.Succeed(this, "Run ended at its start"))
        .otherwise(new sfn.Fail(this, "Unknown mode", { error: "UnknownMode", causePath: "$.mode" })),
    );

    this.stateMachine = new sfn.StateMachine(this, "StateMachine", {
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromChainable(definition),
      comment: "Stepwise run: plan, execute in parallel, summarize.",
      // A run may wait on people for a while, but not forever (the local runtime also caps timers at 24 days).
      timeout: Duration.days(7),
      // Errors only and no execution data: payloads are ids, but logs should not copy what runs carry.
      logs: {
        destination: new LogGroup(this, "StateMachineLogs", {
          // Under /aws/vendedlogs/, as AWS asks of Step Functions' log groups: others add to the account's
          // CloudWatch Logs resource policy, which holds 5,120 characters. The stack's id keeps the name
          // unique when a stack of the same name is made again (the group is retained).
          logGroupName: Fn.join("", ["/aws/vendedlogs/states/", Aws.STACK_NAME, "-", Fn.select(2, Fn.split("/", Aws.STACK_ID))]),
          retention: RetentionDays.ONE_MONTH,
        }),
        level: sfn.LogLevel.ERROR,
        includeExecutionData: false,
      },
      tracingEnabled: true,
    });
    // A run started before a deploy keeps calling the versions it started with: the role may invoke
    // every version of each step function, not only the ones this definition names.
    this.stateMachine.addToRolePolicy(
      new PolicyStatement({
        actions: ["lambda:InvokeFunction"],
        resources: Object.values(props.functions).map((fn) => `${fn.functionArn}:*`),
      }),
    );
    // The state machine is versioned too: each deploy that changes the definition publishes a version
    // (a new revision id replaces this resource; the old version is kept), and the alias moves to it.
    this.version = new sfn.CfnStateMachineVersion(this, "Version", {
      stateMachineArn: this.stateMachine.stateMachineArn,
      stateMachineRevisionId: this.stateMachine.stateMachineRevisionId,
      description: "Published by a deploy; runs started on it finish on it.",
    });
    this.version.applyRemovalPolicy(RemovalPolicy.RETAIN);
    this.alias = new sfn.CfnStateMachineAlias(this, "Alias", {
      name: LIVE_ALIAS,
      description: "What new runs start on: the version of the last deploy.",
      routingConfiguration: [{ stateMachineVersionArn: this.version.attrArn, weight: 100 }],
    });
    this.aliasArn = this.alias.attrArn;
  }
}
