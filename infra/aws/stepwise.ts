import { BedrockAgentCoreClient } from "@aws-sdk/client-bedrock-agentcore";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { Annotations, ArnFormat, CfnOutput, Duration, RemovalPolicy, Stack, Token } from "aws-cdk-lib";
import { HttpApi, HttpMethod, HttpStage, LogGroupLogDestination } from "aws-cdk-lib/aws-apigatewayv2";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import type { CfnCodeInterpreterCustom } from "aws-cdk-lib/aws-bedrockagentcore";
import { AttributeType, BillingMode, Table } from "aws-cdk-lib/aws-dynamodb";
import { Rule } from "aws-cdk-lib/aws-events";
import { SqsQueue } from "aws-cdk-lib/aws-events-targets";
import { Key } from "aws-cdk-lib/aws-kms";
import { FunctionUrlAuthType, InvokeMode } from "aws-cdk-lib/aws-lambda";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Bucket } from "aws-cdk-lib/aws-s3";
import { Secret } from "aws-cdk-lib/aws-secretsmanager";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import type { StateMachine } from "aws-cdk-lib/aws-stepfunctions";
import { Construct } from "constructs";
import { HANDLER_USES } from "../../functions/uses.js";
import { stepwiseTools } from "../../functions/workTools.js";
import { declaredGrants } from "../../shared/contracts/toolGrants.js";
import { settingsFromEnv } from "../../shared/settings.js";
import { TABLE_INDEXES } from "../../shared/store/listings.js";
import { AgentFunctions } from "./agentFunctions.js";
import { concurrencyWarnings, type DeploymentSettings, functionEnvironment, parseSettings, sandboxRuntimeFor } from "./config.js";
import { addConsoleRoutes, CONSOLE_ASSETS_DIR, withConsoleBundle } from "./consoleHosting.js";
import { environmentFor, grantExecutions, grantUses, type HandlerResources, STEP_FUNCTIONS_APIS } from "./handlerAccess.js";
import { API_HANDLER, API_TIMEOUT_SECONDS, NOTIFY_HANDLER, STREAM_BUNDLING, STREAM_HANDLER, type StepName } from "./handlers.js";
import { Monitoring } from "./monitoring.js";
import { acknowledgeNagFindings } from "./nag.js";
import { Orchestration } from "./orchestration.js";
import { StepwiseFunction, type StepwiseFunctionProps } from "./stepwiseFunction.js";
import { ToolResources } from "./toolResources.js";

export interface StepwiseProps extends Omit<Partial<DeploymentSettings>, "interruptTimeoutHours"> {
  /** How long a run waits for a person (approvals, questions). Default 24 hours. */
  readonly interruptTimeout?: Duration;
  /** The same, in hours (what `-c interruptTimeoutHours=…` sets). */
  readonly interruptTimeoutHours?: number;
}

/** Each webhook attempt may take WEBHOOK_TIMEOUT_MS (10 s): a batch of 5 fits the notifier's 90 s. */
const NOTIFY_BATCH = 5;
const NOTIFY_TIMEOUT = Duration.seconds(90);

/**
 * Stepwise in your own CDK app: the table, the agent functions, the state machine, the HTTP API,
 * the streaming Function URL, webhooks (EventBridge → SQS → notifier), alarms and a dashboard.
 * Settings are checked at synth (infra/aws/config.ts) and reach the functions' environment.
 */
export class Stepwise extends Construct {
  readonly table: Table;
  readonly steps: AgentFunctions;
  readonly stateMachine: StateMachine;
  /** The state machine alias new runs start through (each deploy moves it to its version). */
  readonly stateMachineAliasArn: string;
  readonly api: StepwiseFunction;
  readonly stream: StepwiseFunction;
  readonly notify: StepwiseFunction;
  /** Runs Python for run_code where AgentCore is not used (infra/aws/toolResources.ts). */
  readonly sandbox: StepwiseFunction;
  /** run_code's AgentCore Code Interpreter (sandboxRuntime agentcore). */
  readonly codeInterpreter?: CfnCodeInterpreterCustom;
  /** The agents' files: bytes in S3, kept as long as the runs. */
  readonly filesBucket: Bucket;
  readonly httpApi: HttpApi;
  readonly streamUrl: string;
  readonly deadLetters: Queue;
  readonly monitoring: Monitoring;
  /** Every function of the construct, by name. */
  readonly functions: Record<string, StepwiseFunction>;

  constructor(scope: Construct, id: string, props: StepwiseProps = {}) {
    super(scope, id);
    const { interruptTimeout, ...rest } = props;
    const settings = parseSettings(rest);
    // Shown by `cdk synth` and `cdk deploy` (and failing them with --strict).
    for (const warning of concurrencyWarnings(settings)) Annotations.of(this).addWarningV2("stepwise:accountConcurrency", warning);

    this.table = new Table(this, "Table", {
      partitionKey: { name: "pk", type: AttributeType.STRING },
      sortKey: { name: "sk", type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: "ttl",
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: settings.deletionProtection ?? true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const index of TABLE_INDEXES) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
      });
    }
    const table = this.table;

    // Notifications: Step Functions status changes (EventBridge) and our own messages share one queue;
    // what cannot be delivered ends in a dead-letter queue, where nothing is lost.
    this.deadLetters = new Queue(this, "DeadLetters", {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    const notifications = new Queue(this, "Notifications", {
      visibilityTimeout: Duration.seconds(NOTIFY_TIMEOUT.toSeconds() * 6), // AWS's advice for Lambda event sources
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: 5 },
    });
    // Status changes EventBridge could not put on the queue.
    const eventDeadLetters = new Queue(this, "EventDeadLetters", {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    // Seals tool source header values (envelope encryption): the API seals and opens, agents only open.
    const toolSourceKey = new Key(this, "ToolSourceSecrets", {
      enableKeyRotation: true,
      description: "Stepwise: tool source header secrets",
    });
    // The agents' tools: the files bucket (bytes in S3, metadata in the table) and the code sandbox.
    const tools = new ToolResources(this, "Tools", {
      retentionDays: settings.retentionDays ?? 30,
      table,
      sandboxReservedConcurrency: settings.sandboxReservedConcurrency,
      sandboxRuntime: sandboxRuntimeFor(
        settings.sandboxRuntime,
        Token.isUnresolved(Stack.of(this).region) ? undefined : Stack.of(this).region,
      ),
      // The sandbox reads none of them; it gets no key's name either.
      environment: (({ OPENAI_API_KEY_SECRET_ARN: _model, MODERATION_API_KEY_SECRET_ARN: _moderation, ...rest }) => rest)(
        functionEnvironment(settings),
      ),
    });
    // The keys the agents read at run time: the model's, and the search API's of the chosen provider.
    const searchKeyArn =
      settings.webSearchProvider === "tavily"
        ? settings.tavilyApiKeySecretArn
        : settings.webSearchProvider === "brave"
          ? settings.braveApiKeySecretArn
          : undefined;
    const settingsEnvironment = functionEnvironment(settings);
    // Every function gets what its handler uses (functions/uses.ts), its environment and grants derived from that one list.
    const resources: HandlerResources = {
      table,
      tools,
      notifications,
      deadLetters: this.deadLetters,
      toolSourceKey,
      modelKey: settings.openAiApiKeySecretArn
        ? Secret.fromSecretCompleteArn(this, "ModelApiKey", settings.openAiApiKeySecretArn)
        : undefined,
      moderationKey: settings.moderationApiKeySecretArn
        ? Secret.fromSecretCompleteArn(this, "ModerationApiKey", settings.moderationApiKeySecretArn)
        : undefined,
      searchKey: searchKeyArn ? Secret.fromSecretCompleteArn(this, "SearchApiKey", searchKeyArn) : undefined,
      // The grants the tools declare with this deployment's runtime, and the sandbox function's: it
      // stays deployed beside the code interpreter as the runtime the setting can switch back to.
      toolGrants: [
        ...new Set([
          ...declaredGrants(
            stepwiseTools(settingsFromEnv({ ...settingsEnvironment, ...tools.environment, TABLE_NAME: "synth" }), {
              lambda: new LambdaClient({}),
              agentCore: new BedrockAgentCoreClient({}),
              secretsManager: new SecretsManagerClient({}),
            }),
          ),
          "sandbox:invoke" as const,
        ]),
      ],
      settingsEnvironment,
    };

    this.steps = new AgentFunctions(this, "Steps", {
      table,
      environmentOf: (name) => environmentFor(HANDLER_USES[name], resources),
      agentMemoryMb: settings.agentMemoryMb,
    });
    for (const [name, fn] of Object.entries(this.steps.functions) as [StepName, StepwiseFunction][])
      grantUses(fn, HANDLER_USES[name], resources);
    const orchestration = new Orchestration(this, "Orchestration", {
      functions: this.steps.functions,
      maxConcurrency: settings.maxConcurrency,
      interruptTimeout:
        interruptTimeout ??
        (settings.interruptTimeoutHours ? Duration.minutes(Math.round(settings.interruptTimeoutHours * 60)) : undefined),
    });
    this.stateMachine = orchestration.stateMachine;
    this.stateMachineAliasArn = orchestration.aliasArn;
    const stateMachine = this.stateMachine;
    const machine = {
      stateMachineArn: stateMachine.stateMachineArn,
      aliasArn: orchestration.aliasArn,
      executionsArn: Stack.of(this).formatArn({
        service: "states",
        resource: "execution",
        resourceName: `${stateMachine.stateMachineName}:*`,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      }),
    };
    // "Wait for …" resumes the run itself when the decision came before its token was stored; the
    // history budget: Plan, Execute task and Agent turn read how long the execution's history is,
    // and "Continue in a new execution" starts the run's next execution through the alias.
    for (const [name, fn] of Object.entries(this.steps.functions) as [StepName, StepwiseFunction][])
      grantExecutions(this, `${name}Step`, fn, HANDLER_USES[name], machine);
    /** A function that answers requests or messages, with what its handler uses. */
    const handlerFunction = (
      id: "Api" | "Stream" | "Notify",
      props: Omit<StepwiseFunctionProps, "table" | "environment">,
      environment: Record<string, string> = {},
    ) => {
      const fn = new StepwiseFunction(this, id, {
        ...props,
        table,
        environment: { ...environmentFor(HANDLER_USES[id], resources, orchestration.aliasArn), ...environment },
      });
      grantUses(fn, HANDLER_USES[id], resources);
      grantExecutions(this, id, fn, HANDLER_USES[id], machine);
      return fn;
    };

    this.stream = handlerFunction("Stream", {
      entry: STREAM_HANDLER,
      bundling: STREAM_BUNDLING,
      timeout: Duration.minutes(15),
      // No reserved concurrency unless set: Lambda keeps 100 of the account's executions unreserved,
      // and new accounts have a quota too small to reserve any (docs/configuration.md, "Configuration").
      overrides: { reservedConcurrentExecutions: settings.streamReservedConcurrency },
    });
    const streamUrl = this.stream.addFunctionUrl({
      authType: FunctionUrlAuthType.NONE, // Bearer API keys are checked by the handler
      invokeMode: InvokeMode.RESPONSE_STREAM,
    });
    this.streamUrl = streamUrl.url;

    this.api = handlerFunction(
      "Api",
      {
        entry: API_HANDLER,
        timeout: Duration.seconds(API_TIMEOUT_SECONDS),
        bundling: withConsoleBundle(),
        overrides: {
          reservedConcurrentExecutions: settings.apiReservedConcurrency,
          // A policy's save is checked by Cedar.
          layers: [this.steps.policyEngine],
        },
      },
      { STREAM_URL: streamUrl.url, CONSOLE_LINKS: "true", CONSOLE_ASSETS_DIR },
    );

    // It delivers webhooks, ends runs and starts the next waiting run of a session (through the alias, as the API does).
    this.notify = handlerFunction("Notify", { entry: NOTIFY_HANDLER, timeout: NOTIFY_TIMEOUT });
    this.notify.addEventSource(new SqsEventSource(notifications, { batchSize: NOTIFY_BATCH, reportBatchItemFailures: true }));
    new Rule(this, "ExecutionEnded", {
      description: "Stepwise: a run's execution ended (also crashes and aborts): notify.",
      eventPattern: {
        source: ["aws.states"],
        detailType: ["Step Functions Execution Status Change"],
        detail: { stateMachineArn: [stateMachine.stateMachineArn], status: ["SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"] },
      },
      targets: [new SqsQueue(notifications, { deadLetterQueue: eventDeadLetters })],
    });

    this.httpApi = new HttpApi(this, "HttpApi", {
      description: "Stepwise agent API",
      createDefaultStage: false,
      // CORS is answered by the handlers, from CORS_ALLOWED_ORIGINS (the console is same-origin and needs none).
    });
    new HttpStage(this, "HttpApiStage", {
      httpApi: this.httpApi,
      stageName: "$default",
      autoDeploy: true,
      throttle: { rateLimit: settings.apiRateLimit ?? 50, burstLimit: settings.apiBurstLimit ?? 100 },
      accessLogSettings: {
        destination: new LogGroupLogDestination(new LogGroup(this, "HttpApiAccessLogs", { retention: RetentionDays.ONE_MONTH })),
      },
    });
    const apiIntegration = new HttpLambdaIntegration("ApiIntegration", this.api);
    this.httpApi.addRoutes({ path: "/v1/{proxy+}", integration: apiIntegration });
    addConsoleRoutes(this.httpApi, apiIntegration);
    // The console streams from the Function URL: another origin, allowed by name (beside corsAllowedOrigins).
    this.stream.addEnvironment("CONSOLE_ORIGIN", this.httpApi.apiEndpoint);
    this.stream.addEnvironment("API_URL", this.httpApi.apiEndpoint);
    // MCP on the API answers within its 30 s; the stream URL's /mcp streams progress and elicitation.
    // OPTIONS: a browser's preflight reaches the handler, which answers it from corsAllowedOrigins
    // (an HTTP API answers no method it has no route for).
    this.httpApi.addRoutes({
      path: "/mcp",
      methods: [HttpMethod.POST, HttpMethod.GET, HttpMethod.DELETE, HttpMethod.OPTIONS],
      integration: apiIntegration,
    });
    // A2A: the public agent card, and /a2a on the API (answers within its 30 s); the card names the stream URL's /a2a, which streams.
    this.httpApi.addRoutes({ path: "/.well-known/agent-card.json", methods: [HttpMethod.GET], integration: apiIntegration });
    this.httpApi.addRoutes({ path: "/a2a", methods: [HttpMethod.POST, HttpMethod.OPTIONS], integration: apiIntegration });

    this.sandbox = tools.sandbox;
    this.codeInterpreter = tools.codeInterpreter;
    this.filesBucket = tools.bucket;
    this.functions = { ...this.steps.functions, Api: this.api, Stream: this.stream, Notify: this.notify, Sandbox: this.sandbox };
    this.monitoring = new Monitoring(this, "Monitoring", {
      functions: this.functions,
      stateMachine,
      table,
      deadLetterQueues: { DeadLetters: this.deadLetters, EventDeadLetters: eventDeadLetters },
      httpApi: this.httpApi,
      notificationQueue: notifications,
      stepFunctionsApis: STEP_FUNCTIONS_APIS.filter((api) => api !== "GetExecutionHistory"),
      alarmEmail: settings.alarmEmail,
    });

    acknowledgeNagFindings(this, {
      stateMachine,
      httpApi: this.httpApi,
      deadLetterQueues: [this.deadLetters, eventDeadLetters],
      accessLogBuckets: [tools.accessLogs],
    });

    new CfnOutput(this, "ApiUrl", { value: this.httpApi.apiEndpoint });
    new CfnOutput(this, "StreamUrl", { value: streamUrl.url });
    new CfnOutput(this, "StateMachineArn", { value: stateMachine.stateMachineArn });
    new CfnOutput(this, "StateMachineAliasArn", { value: orchestration.aliasArn });
    new CfnOutput(this, "TableName", { value: table.tableName });
    new CfnOutput(this, "DeadLetterQueueUrl", { value: this.deadLetters.queueUrl });
    new CfnOutput(this, "FilesBucket", { value: tools.bucket.bucketName });
    new CfnOutput(this, "DashboardName", { value: this.monitoring.dashboard.dashboardName });
  }
}
