/**
 * What a tool needs from AWS, declared with the tool (`grants` in defineTool), and the IAM actions
 * each stands for. The stack grants the agent functions what their tools declare, on its own
 * resources (infra/aws/toolResources.ts); the IAM-coverage test checks every declaration against the
 * calls the tool's code can make.
 */
export const TOOL_GRANT_ACTIONS = {
  /** Read the run's files' bytes (S3). */
  "files:read": ["s3:GetObject"],
  /** Write files of the run (S3). */
  "files:write": ["s3:PutObject"],
  /** Run code in the sandbox function (Lambda); read its state to wait while it wakes from Inactive. */
  "sandbox:invoke": ["lambda:InvokeFunction", "lambda:GetFunctionConfiguration"],
  /** Start, use and stop sessions of the stack's code interpreter (AgentCore). */
  "interpreter:invoke": [
    "bedrock-agentcore:StartCodeInterpreterSession",
    "bedrock-agentcore:InvokeCodeInterpreter",
    "bedrock-agentcore:StopCodeInterpreterSession",
  ],
} as const;

export type ToolGrant = keyof typeof TOOL_GRANT_ACTIONS;

/** Every grant the tools declare, once each. */
export function declaredGrants(tools: readonly { readonly grants?: readonly ToolGrant[] }[]): ToolGrant[] {
  return [...new Set(tools.flatMap((tool) => tool.grants ?? []))].sort();
}
