import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from "aws-cdk-lib";
import { HttpApi, CorsHttpMethod } from "aws-cdk-lib/aws-apigatewayv2";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import { AttributeType, BillingMode, Table } from "aws-cdk-lib/aws-dynamodb";
import { FunctionUrlAuthType, InvokeMode, HttpMethod } from "aws-cdk-lib/aws-lambda";
import { Policy, PolicyStatement } from "aws-cdk-lib/aws-iam";
import { Rule } from "aws-cdk-lib/aws-events";
import { SqsQueue } from "aws-cdk-lib/aws-events-targets";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { Secret } from "aws-cdk-lib/aws-secretsmanager";
import { Key } from "aws-cdk-lib/aws-kms";
import type { Construct } from "constructs";
import { AgentFunctions } from "./agentFunctions.js";
import { API_HANDLER, NOTIFY_HANDLER, STREAM_HANDLER } from "./handlers.js";
import { Orchestration } from "./orchestration.js";
import { StepwiseFunction } from "./stepwiseFunction.js";
import { ToolResources } from "./toolResources.js";

export interface StepwiseStackProps extends StackProps {
  /** Model name for the OpenAI-compatible endpoint. */
  readonly model?: string;
  /** OpenAI-compatible base URL; unset means api.openai.com. */
  readonly openAiBaseUrl?: string;
  /** ARN of the Secrets Manager secret holding the API key (a plain string secret). */
  readonly openAiApiKeySecretArn?: string;
  /** Executors running at once per step (1–40). */
  readonly maxConcurrency?: number;
  /** How long a run waits for a person (approvals, questions). Default 24 hours. */
  readonly interruptTimeout?: Duration;
}

/** The stack only assembles: the table, the agent functions, the state machine, the API and the stream. */
export class StepwiseStack extends Stack {
  readonly steps: AgentFunctions;

  constructor(scope: Construct, id: string, props: StepwiseStackProps = {}) {
    super(scope, id, props);

    const table = new Table(this, "Table", {
      partitionKey: { name: "pk", type: AttributeType.STRING },
      sortKey: { name: "sk", type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: "ttl",
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // Notifications: Step Functions status changes (EventBridge) and our own messages share one queue;
    // what cannot be delivered ends in the dead-letter queue, where nothing is lost.
    const deadLetters = new Queue(this, "DeadLetters", { retentionPeriod: Duration.days(14), encryption: QueueEncryption.SQS_MANAGED });
    const notifications = new Queue(this, "Notifications", {
      visibilityTimeout: Duration.minutes(2),
      encryption: QueueEncryption.SQS_MANAGED,
      deadLetterQueue: { queue: deadLetters, maxReceiveCount: 5 },
    });
    const queueEnvironment = { NOTIFY_QUEUE_URL: notifications.queueUrl, DEAD_LETTER_QUEUE_URL: deadLetters.queueUrl };

    // Seals tool source header values (envelope encryption): the API seals and opens, agents only open.
    const toolSourceKey = new Key(this, "ToolSourceSecrets", { enableKeyRotation: true, description: "Stepwise: tool source header secrets" });
    // The agents' tools: the files bucket (bytes in S3, metadata in the table) and the code sandbox.
    const tools = new ToolResources(this, "Tools", { retentionDays: 30, table });
    const modelEnvironment: Record<string, string> = {
      ...queueEnvironment,
      TOOL_SOURCES_KMS_KEY_ID: toolSourceKey.keyArn,
      ...tools.environment,
      STEPWISE_MODEL: props.model ?? "gpt-4o-mini",
      ...(props.openAiBaseUrl ? { OPENAI_BASE_URL: props.openAiBaseUrl } : {}),
      ...(props.openAiApiKeySecretArn ? { OPENAI_API_KEY_SECRET_ARN: props.openAiApiKeySecretArn } : {}),
    };
    const agents = new AgentFunctions(this, "Steps", { table, environment: modelEnvironment });
    this.steps = agents;
    const apiKeySecret = props.openAiApiKeySecretArn ? Secret.fromSecretCompleteArn(this, "ModelApiKey", props.openAiApiKeySecretArn) : undefined;
    for (const fn of Object.values(agents.functions)) {
      notifications.grantSendMessages(fn);
      apiKeySecret?.grantRead(fn);
      toolSourceKey.grantDecrypt(fn);
      tools.grantFiles(fn);
      tools.grantSandbox(fn);
    }
    const orchestration = new Orchestration(this, "Orchestration", {
      functions: agents.functions,
      maxConcurrency: props.maxConcurrency,
      interruptTimeout: props.interruptTimeout,
    });
    const stateMachine = orchestration.stateMachine;
    // "Wait for …" resumes the run itself when the decision came before its token was stored. Its own
    // policy, not the role's default one: the function must exist before the state machine that
    // names it, and the default policy is created with the function (grantTaskResponse → a cycle).
    new Policy(this, "AwaitInterruptResumes", {
      roles: [agents.functions.AwaitInterrupt.role!],
      statements: [new PolicyStatement({ actions: ["states:SendTaskSuccess"], resources: [stateMachine.stateMachineArn] })],
    });

    const stream = new StepwiseFunction(this, "Stream", { entry: STREAM_HANDLER, table, timeout: Duration.minutes(15) });
    table.grantReadData(stream);
    const streamUrl = stream.addFunctionUrl({
      authType: FunctionUrlAuthType.NONE, // Bearer API keys are checked by the handler
      invokeMode: InvokeMode.RESPONSE_STREAM,
      cors: { allowedOrigins: ["*"], allowedMethods: [HttpMethod.GET], allowedHeaders: ["authorization", "last-event-id"] },
    });

    const api = new StepwiseFunction(this, "Api", {
      entry: API_HANDLER,
      table,
      environment: {
        ...queueEnvironment,
        STATE_MACHINE_ARN: stateMachine.stateMachineArn,
        STREAM_URL: streamUrl.url,
        CONSOLE_LINKS: "true",
        TOOL_SOURCES_KMS_KEY_ID: toolSourceKey.keyArn,
        ...tools.environment,
      },
      timeout: Duration.seconds(29),
    });
    table.grantReadWriteData(api);
    stateMachine.grantStartExecution(api);
    stateMachine.grantExecution(api, "states:DescribeExecution", "states:StopExecution", "states:GetExecutionHistory", "states:RedriveExecution");
    stateMachine.grantTaskResponse(api);
    notifications.grantSendMessages(api);
    toolSourceKey.grantEncryptDecrypt(api);
    tools.grantFiles(api);

    const notify = new StepwiseFunction(this, "Notify", { entry: NOTIFY_HANDLER, table, environment: queueEnvironment, timeout: Duration.minutes(1) });
    table.grantReadWriteData(notify);
    notifications.grantSendMessages(notify);
    deadLetters.grantSendMessages(notify);
    notify.addEventSource(new SqsEventSource(notifications, { batchSize: 10, reportBatchItemFailures: true }));
    new Rule(this, "ExecutionEnded", {
      description: "Stepwise: a run's execution ended (also crashes and aborts): notify.",
      eventPattern: {
        source: ["aws.states"],
        detailType: ["Step Functions Execution Status Change"],
        detail: { stateMachineArn: [stateMachine.stateMachineArn], status: ["SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"] },
      },
      targets: [new SqsQueue(notifications)],
    });

    const httpApi = new HttpApi(this, "HttpApi", {
      description: "Stepwise agent API",
      corsPreflight: {
        allowOrigins: ["*"],
        allowMethods: [CorsHttpMethod.ANY],
        allowHeaders: ["authorization", "content-type", "idempotency-key"],
      exposeHeaders: ["location", "retry-after", "idempotent-replayed"],
      },
    });
    httpApi.addRoutes({ path: "/v1/{proxy+}", integration: new HttpLambdaIntegration("ApiIntegration", api) });

    new CfnOutput(this, "ApiUrl", { value: httpApi.apiEndpoint });
    new CfnOutput(this, "StreamUrl", { value: streamUrl.url });
    new CfnOutput(this, "StateMachineArn", { value: stateMachine.stateMachineArn });
    new CfnOutput(this, "TableName", { value: table.tableName });
    new CfnOutput(this, "FilesBucket", { value: tools.bucket.bucketName });
    new CfnOutput(this, "DeadLetterQueueUrl", { value: deadLetters.queueUrl });
  }
}
