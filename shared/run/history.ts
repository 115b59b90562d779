import { GetExecutionHistoryCommand } from "@aws-sdk/client-sfn";
import type { Services } from "../services.js";

/** State transitions of an execution (what Step Functions bills), counted from its history. */
export async function countStateTransitions(services: Services, executionArn: string): Promise<number> {
  let count = 0;
  let nextToken: string | undefined;
  do {
    const page = await services.sfn.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, nextToken, includeExecutionData: false }));
    count += (page.events ?? []).filter((e) => e.type?.endsWith("StateEntered")).length;
    nextToken = page.nextToken;
  } while (nextToken);
  return count;
}
