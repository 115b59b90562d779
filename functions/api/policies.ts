import { PolicyName, SavePolicyRequest } from "../../shared/contracts/policies.js";
import { NotFoundError } from "../../shared/errors.js";
import { savePolicy } from "../../shared/run/policies.js";
import { baseUrl, type HttpResult, json } from "../http.js";
import { parseBody } from "../jsonBody.js";
import type { Request, Route } from "./routes.js";

/**
 * Tool policies: a tenant's Cedar policies on its agents' tool calls (docs/policies.md). Each PUT
 * checks the policy against the tenant's catalogue and saves a new immutable version, in force at
 * once; GET reads the latest or one version (`name@2`); DELETE removes every version.
 */
export const policyRoutes: Route[] = [
  { method: "GET", pattern: /^\/v1\/policies$/, handle: listPolicies },
  { method: "PUT", pattern: /^\/v1\/policies\/(?<policy>[^/]+)$/, handle: putVersion, body: SavePolicyRequest },
  { method: "GET", pattern: /^\/v1\/policies\/(?<policy>[^/]+)$/, handle: getPolicy },
  { method: "GET", pattern: /^\/v1\/policies\/(?<policy>[^/]+)\/versions$/, handle: listVersions },
  { method: "DELETE", pattern: /^\/v1\/policies\/(?<policy>[^/]+)$/, handle: deletePolicy },
];

async function listPolicies({ services, tenantId }: Request): Promise<HttpResult> {
  return json(200, { policies: await services.policies.list(tenantId) });
}

async function putVersion({ event, services, tenantId, params }: Request): Promise<HttpResult> {
  const name = PolicyName.safeParse(params.policy);
  if (!name.success) throw new NotFoundError(`No policy can be named ${params.policy}: ${name.error.issues[0]?.message}.`);
  const saved = await savePolicy(services, tenantId, name.data, parseBody(event, SavePolicyRequest));
  return json(201, saved, { location: `${baseUrl(event)}/v1/policies/${saved.name}@${saved.version}` });
}

async function getPolicy({ services, tenantId, params }: Request): Promise<HttpResult> {
  const ref = params.policy.replace(/%40/gi, "@");
  const [name = "", version] = ref.split("@");
  const number = version === undefined ? undefined : /^[1-9][0-9]{0,8}$/.test(version) ? Number(version) : Number.NaN;
  const policy =
    PolicyName.safeParse(name).success && !Number.isNaN(number) ? await services.policies.get(tenantId, name, number) : undefined;
  if (!policy) throw new NotFoundError(`No policy ${ref}.`);
  return json(200, policy);
}

async function listVersions({ services, tenantId, params }: Request): Promise<HttpResult> {
  const versions = PolicyName.safeParse(params.policy).success ? await services.policies.versions(tenantId, params.policy) : [];
  if (versions.length === 0) throw new NotFoundError(`No policy named ${params.policy}.`);
  return json(200, { versions });
}

async function deletePolicy({ services, tenantId, params }: Request): Promise<HttpResult> {
  const deleted = PolicyName.safeParse(params.policy).success && (await services.policies.delete(tenantId, params.policy));
  if (!deleted) throw new NotFoundError(`No policy named ${params.policy}.`);
  return { statusCode: 204, headers: { "cache-control": "no-store" }, body: "" };
}
