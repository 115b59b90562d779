import { AgentName, AgentRef, parseAgentRef, SaveAgentRequest } from "../../shared/contracts/agents.js";
import { NotFoundError } from "../../shared/errors.js";
import { saveAgent } from "../../shared/run/savedAgents.js";
import { baseUrl, type HttpResult, json } from "../http.js";
import { parseBody } from "../jsonBody.js";
import type { Request, Route } from "./routes.js";

/**
 * Saved agents: named agent configurations a run names (`agent: "analyst"` or `"analyst@3"`).
 * Each POST saves a new immutable version; GET reads the latest or one version; DELETE removes
 * them all (runs that named one keep what they resolved).
 */
export const agentRoutes: Route[] = [
  { method: "GET", pattern: /^\/v1\/agents$/, handle: listAgents },
  { method: "POST", pattern: /^\/v1\/agents\/(?<agent>[^/]+)$/, handle: createVersion, body: SaveAgentRequest },
  { method: "GET", pattern: /^\/v1\/agents\/(?<agent>[^/]+)$/, handle: getAgent },
  { method: "GET", pattern: /^\/v1\/agents\/(?<agent>[^/]+)\/versions$/, handle: listVersions },
  { method: "DELETE", pattern: /^\/v1\/agents\/(?<agent>[^/]+)$/, handle: deleteAgent },
];

async function listAgents({ services, tenantId }: Request): Promise<HttpResult> {
  return json(200, { agents: await services.savedAgents.list(tenantId) });
}

async function createVersion({ event, services, tenantId, params }: Request): Promise<HttpResult> {
  const name = AgentName.safeParse(params.agent);
  if (!name.success) throw new NotFoundError(`No agent can be named ${params.agent}: ${name.error.issues[0]?.message}.`);
  const saved = await saveAgent(services, tenantId, name.data, parseBody(event, SaveAgentRequest));
  return json(201, saved, { location: `${baseUrl(event)}/v1/agents/${saved.name}@${saved.version}` });
}

async function getAgent({ services, tenantId, params }: Request): Promise<HttpResult> {
  const ref = params.agent.replace(/%40/gi, "@");
  const { name, version } = AgentRef.safeParse(ref).success ? parseAgentRef(ref) : { name: "", version: undefined };
  const agent = name ? await services.savedAgents.get(tenantId, name, version) : undefined;
  if (!agent) throw new NotFoundError(`No saved agent ${ref}.`);
  return json(200, agent);
}

async function listVersions({ services, tenantId, params }: Request): Promise<HttpResult> {
  const versions = AgentName.safeParse(params.agent).success ? await services.savedAgents.versions(tenantId, params.agent) : [];
  if (versions.length === 0) throw new NotFoundError(`No saved agent named ${params.agent}.`);
  return json(200, { versions });
}

async function deleteAgent({ services, tenantId, params }: Request): Promise<HttpResult> {
  const deleted = AgentName.safeParse(params.agent).success && (await services.savedAgents.delete(tenantId, params.agent));
  if (!deleted) throw new NotFoundError(`No saved agent named ${params.agent}.`);
  return { statusCode: 204, headers: { "cache-control": "no-store" }, body: "" };
}
