import type { DoorPorts } from "../handlerPorts.js";
import type { Links } from "../views/runView.js";

/**
 * What the HTTP front decides for one call of an agent protocol served over HTTP (MCP, A2A): the
 * caller's tenant, whether the reply streams, and how long a call may follow its run.
 */
export interface ProtocolContext {
  services: DoorPorts;
  tenantId: string;
  links: Links;
  /** The reply is streamed to the client as it is written (the stream function); false behind a buffering API. */
  streaming: boolean;
  /** How long one call may follow its run before it answers with the run as it stands. */
  waitMs: number;
  version: string;
}
