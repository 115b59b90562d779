import { App, Duration } from "aws-cdk-lib";
import { StepwiseStack } from "./stack.js";

const app = new App();
new StepwiseStack(app, app.node.tryGetContext("stackName") ?? "Stepwise", {
  model: process.env.STEPWISE_MODEL,
  openAiBaseUrl: process.env.OPENAI_BASE_URL,
  openAiApiKeySecretArn: app.node.tryGetContext("openAiApiKeySecretArn") ?? process.env.OPENAI_API_KEY_SECRET_ARN,
  maxConcurrency: app.node.tryGetContext("maxConcurrency") ? Number(app.node.tryGetContext("maxConcurrency")) : undefined,
  interruptTimeout: app.node.tryGetContext("interruptTimeoutHours") ? Duration.hours(Number(app.node.tryGetContext("interruptTimeoutHours"))) : undefined,
  corsAllowedOrigins: String(app.node.tryGetContext("corsAllowedOrigins") ?? "").split(",").filter(Boolean),
});
