import { LOCAL_REGION } from "./account.js";
import type { EventLog } from "./stepFunctions.js";

const STATE_TYPE_PREFIX: Record<string, string> = {
  Task: "Task",
  Choice: "Choice",
  Map: "Map",
  Pass: "Pass",
  Succeed: "Succeed",
  Fail: "Fail",
  Wait: "Wait",
  Parallel: "Parallel",
};

/**
 * aws-local-stepfunctions' event log → Step Functions' HistoryEvent shape; undefined for what
 * Step Functions records no event of (a caught error: the history goes on at the Catch's state).
 */
export function toHistoryEvent(log: EventLog, id: number): Record<string, unknown> | undefined {
  const base = { id, previousEventId: id - 1, timestamp: log.timestamp / 1000 };
  const prefix = "state" in log ? (STATE_TYPE_PREFIX[log.state.type] ?? "") : "";
  switch (log.type) {
    case "ExecutionStarted":
      return { ...base, type: "ExecutionStarted", executionStartedEventDetails: { input: JSON.stringify(log.input) } };
    case "ExecutionSucceeded":
      return { ...base, type: "ExecutionSucceeded", executionSucceededEventDetails: { output: JSON.stringify(log.output) } };
    case "ExecutionFailed":
      return { ...base, type: "ExecutionFailed", executionFailedEventDetails: { error: log.Error, cause: String(log.Cause ?? "") } };
    case "ExecutionAborted":
      return { ...base, type: "ExecutionAborted", executionAbortedEventDetails: {} };
    case "ExecutionTimeout":
      return { ...base, type: "ExecutionTimedOut", executionTimedOutEventDetails: {} };
    case "StateEntered":
      return {
        ...base,
        type: `${prefix}StateEntered`,
        stateEnteredEventDetails: { name: log.state.name, input: JSON.stringify(log.state.input) },
      };
    case "StateExited":
      return {
        ...base,
        type: `${prefix}StateExited`,
        stateExitedEventDetails: { name: log.state.name, output: JSON.stringify(log.state.output) },
      };
    case "StateFailed":
      return {
        ...base,
        type: "TaskFailed",
        taskFailedEventDetails: { resourceType: "lambda", resource: log.state.name, error: log.Error, cause: String(log.Cause ?? "") },
      };
    case "StateRetried":
      // Step Functions has no "retried" event: a retry shows as the task scheduled again.
      return {
        ...base,
        type: "TaskScheduled",
        taskScheduledEventDetails: {
          resourceType: "lambda",
          resource: "invoke",
          region: LOCAL_REGION,
          parameters: JSON.stringify(log.state.input ?? {}),
        },
      };
    case "MapIterationStarted":
    case "MapIterationSucceeded":
    case "MapIterationFailed":
      return {
        ...base,
        type: log.type,
        [`${log.type[0].toLowerCase()}${log.type.slice(1)}EventDetails`]: { name: log.parentState?.name, index: log.index },
      };
    default:
      return undefined;
  }
}
