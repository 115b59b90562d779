import { BadRequestError } from "../errors.js";
import type { TenantSettings } from "./api.js";

/**
 * Tenant settings that lower one of the deployment's limits and may never raise it: a tenant
 * cannot take more of what all tenants share than the operator allows. Each names the deployment
 * setting it lowers.
 */
const CAPPED = {
  maxSandboxes: { setting: "MAX_SANDBOXES_PER_TENANT", what: "code sandboxes running at once" },
  maxOpenStreams: { setting: "MAX_OPEN_STREAMS_PER_TENANT", what: "open streams" },
} as const;
export type CappedSetting = keyof typeof CAPPED;

/** The tenant's limit: its own value when set, never over the deployment's (one saved under a higher ceiling gets the lower). */
export const tenantLimit = (own: number | undefined, ceiling: number): number => Math.min(own ?? ceiling, ceiling);

/** Settings sent that would raise a deployment's limit: 400 naming the field and its ceiling, before anything is saved. */
export function assertLowersOnly(sent: TenantSettings, ceilings: Record<CappedSetting, number>): void {
  for (const field of Object.keys(CAPPED) as CappedSetting[]) {
    const [value, ceiling] = [sent[field], ceilings[field]];
    if (value !== undefined && value > ceiling)
      throw new BadRequestError(
        `${field} can lower this deployment's cap on ${CAPPED[field].what}, ${ceiling}, not raise it (${CAPPED[field].setting}).`,
        { field, max: ceiling },
      );
  }
}
