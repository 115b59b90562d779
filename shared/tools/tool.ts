import type * as z from "zod";
import type { ToolGrant } from "../contracts/toolGrants.js";
import type { Tool, ToolContext } from "../ports/tools.js";

export function defineTool<S extends z.ZodType>(tool: {
  name: string;
  description: string;
  access: "read" | "write";
  parameters: S;
  persona?: string;
  pure?: boolean;
  asksUser?: boolean;
  idempotent?: boolean;
  grants?: readonly ToolGrant[];
  endScope?(runId: string, scope: string): Promise<void>;
  run(args: z.infer<S>, context: ToolContext): Promise<string>;
}): Tool<z.infer<S>> {
  return tool as Tool<z.infer<S>>;
}
