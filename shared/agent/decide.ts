import type { Interrupt, ResolveInterruptRequest } from "../contracts/interrupts.js";
import type { RunRecord } from "../contracts/run.js";
import type { Ports } from "../ports/index.js";
import { type DecidePorts, decideInterrupt } from "./interrupts.js";

/**
 * A person's decision on a pause, whichever door it came through (REST, MCP's decide tool or
 * elicitation, an A2A reply, an AG-UI resume): checked against the pause's kind (an edit's arguments
 * against the tool's schema, from the tenant's catalogue), recorded once, and the run goes on.
 */
export async function decidePause(
  ports: DecidePorts & Pick<Ports, "tools">,
  tenantId: string,
  run: RunRecord,
  interruptId: string,
  request: ResolveInterruptRequest,
): Promise<Interrupt> {
  const tools = await ports.tools.registryFor(tenantId);
  return decideInterrupt(ports, run, interruptId, request, (name) => tools.get(name));
}
