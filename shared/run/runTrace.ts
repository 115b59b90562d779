import type { RunEvent } from "../contracts/events.js";
import type { RunRecord } from "../contracts/run.js";
import type { GenAiSpan } from "../contracts/traces.js";
import { errorMessage } from "../errors.js";
import { settingsFor } from "../llm/roleSettings.js";
import { logger } from "../observability.js";
import type { Ports, SettingsOf } from "../ports/index.js";
import { genAiSpans } from "../views/genAiTrace.js";

/** Events read per page, and at most this many pages: a trace of the longest run stays one answer. */
const PAGE = 1_000;
const MAX_PAGES = 100;

export type RunTracePorts = Pick<Ports, "events"> & SettingsOf<"model">;

/** The run as OpenTelemetry GenAI spans, from all its events (`GET /v1/runs/{id}/trace`, and the export at its end). */
export async function runSpans(ports: RunTracePorts, run: RunRecord): Promise<GenAiSpan[]> {
  const events: RunEvent[] = [];
  for (let page = 0, after = 0; page < MAX_PAGES; page++) {
    const got = await ports.events.list(run.runId, after, PAGE);
    events.push(...got);
    if (got.length < PAGE) break;
    after = got.at(-1)?.seq ?? after;
  }
  const { model } = ports.settings;
  return genAiSpans(run, events, { modelOf: (role) => settingsFor(role, model.roles).model ?? model.name });
}

/**
 * An ended run's spans sent where the deployment sends traces (X-Ray on AWS). Best effort: a
 * trace that cannot be read or sent is logged, and the run's ending goes on without it.
 */
export async function exportRunTrace(ports: RunTracePorts & Pick<Ports, "traces">, run: RunRecord): Promise<void> {
  if (!ports.traces.active) return;
  try {
    await ports.traces.send(await runSpans(ports, run));
  } catch (error) {
    logger.warn("trace not exported", { runId: run.runId, error: errorMessage(error) });
  }
}
