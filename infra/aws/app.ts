import { App } from "aws-cdk-lib";
import { settingsFromContext } from "./config.js";
import { StepwiseStack } from "./stack.js";

const app = new App();
// `-c name=value` (or cdk.json), checked at synth; the model settings may also come from the environment.
new StepwiseStack(
  app,
  app.node.tryGetContext("stackName") ?? "Stepwise",
  settingsFromContext((key) => app.node.tryGetContext(key)),
);
