import { GetExecutionHistoryCommand } from "@aws-sdk/client-sfn";
import type { Services } from "../services.js";

const EXECUTION_ENDED = new Set(["ExecutionSucceeded", "ExecutionFailed", "ExecutionAborted", "ExecutionTimedOut"]);

/**
 * State transitions of an execution (what Step Functions bills), counted from its history, and
 * whether the execution has ended (only then is the count final).
 */
export async function countStateTransitions(services: Services, executionArn: string): Promise<{ count: number; final: boolean }> {
  let count = 0;
  let final = false;
  let nextToken: string | undefined;
  do {
    const page = await services.sfn.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, nextToken, includeExecutionData: false }));
    for (const event of page.events ?? []) {
      if (event.type?.endsWith("StateEntered")) count++;
      if (event.type && EXECUTION_ENDED.has(event.type)) final = true;
    }
    nextToken = page.nextToken;
  } while (nextToken);
  return { count, final };
}
