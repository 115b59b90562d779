/** Event types the stream sends (`event:` lines); EventSource only delivers the named ones it listens to, so every one is here (a unit test checks them against the contract). */
export const STREAM_EVENT_TYPES = [
  "run.started", "plan.updated", "task.started", "agent.thought", "agent.delta", "agent.reasoning", "tool.called", "tool.result",
  "code", "report.delta", "search.progress",
  "tool_source.unavailable", "task.completed", "interrupt.opened", "interrupt.resolved", "file.created",
  "run.resumed", "run.succeeded", "run.failed", "run.timed_out", "run.cancelled",
  "run.queued_behind", "run.interrupted",
];
