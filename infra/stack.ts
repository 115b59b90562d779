import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from "aws-cdk-lib";
import { HttpApi, CorsHttpMethod } from "aws-cdk-lib/aws-apigatewayv2";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import { AttributeType, BillingMode, Table } from "aws-cdk-lib/aws-dynamodb";
import { FunctionUrlAuthType, InvokeMode, HttpMethod } from "aws-cdk-lib/aws-lambda";
import { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import type { Construct } from "constructs";
import { AgentFunctions, lambdaProps } from "./agentFunctions.js";
import { API_HANDLER, STREAM_HANDLER } from "./handlers.js";
import { Orchestration } from "./orchestration.js";

export interface StepwiseStackProps extends StackProps {
  /** Model name for the OpenAI-compatible endpoint. */
  readonly model?: string;
  /** OpenAI-compatible base URL; unset means api.openai.com. */
  readonly openAiBaseUrl?: string;
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

    const modelEnvironment: Record<string, string> = {
      STEPWISE_MODEL: props.model ?? "gpt-4o-mini",
      ...(props.openAiBaseUrl ? { OPENAI_BASE_URL: props.openAiBaseUrl } : {}),
      ...(process.env.OPENAI_API_KEY ? { OPENAI_API_KEY: process.env.OPENAI_API_KEY } : {}),
    };
    const agents = new AgentFunctions(this, "Steps", { table, environment: modelEnvironment });
    this.steps = agents;
    const orchestration = new Orchestration(this, "Orchestration", {
      functions: agents.functions,
      maxConcurrency: props.maxConcurrency,
      interruptTimeout: props.interruptTimeout,
    });
    const stateMachine = orchestration.stateMachine;

    const stream = new NodejsFunction(this, "Stream", {
      ...lambdaProps(this, "Stream", STREAM_HANDLER, table, {}),
      timeout: Duration.minutes(15),
    });
    table.grantReadData(stream);
    const streamUrl = stream.addFunctionUrl({
      authType: FunctionUrlAuthType.NONE, // Bearer API keys are checked by the handler
      invokeMode: InvokeMode.RESPONSE_STREAM,
      cors: { allowedOrigins: ["*"], allowedMethods: [HttpMethod.GET], allowedHeaders: ["authorization", "last-event-id"] },
    });

    const api = new NodejsFunction(this, "Api", {
      ...lambdaProps(this, "Api", API_HANDLER, table, {
        STATE_MACHINE_ARN: stateMachine.stateMachineArn,
        STREAM_URL: streamUrl.url,
        CONSOLE_LINKS: "true",
      }),
      timeout: Duration.seconds(29),
    });
    table.grantReadWriteData(api);
    stateMachine.grantStartExecution(api);
    stateMachine.grantExecution(api, "states:DescribeExecution", "states:StopExecution", "states:GetExecutionHistory");
    stateMachine.grantTaskResponse(api);

    const httpApi = new HttpApi(this, "HttpApi", {
      description: "Stepwise agent API",
      corsPreflight: {
        allowOrigins: ["*"],
        allowMethods: [CorsHttpMethod.ANY],
        allowHeaders: ["authorization", "content-type", "idempotency-key"],
      },
    });
    httpApi.addRoutes({ path: "/v1/{proxy+}", integration: new HttpLambdaIntegration("ApiIntegration", api) });

    new CfnOutput(this, "ApiUrl", { value: httpApi.apiEndpoint });
    new CfnOutput(this, "StreamUrl", { value: streamUrl.url });
    new CfnOutput(this, "StateMachineArn", { value: stateMachine.stateMachineArn });
    new CfnOutput(this, "TableName", { value: table.tableName });
  }
}
