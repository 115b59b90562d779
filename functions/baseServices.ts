import { type BaseServices, createBaseServices } from "../shared/baseServices.js";
import { loadConfig } from "../shared/config.js";

let base: BaseServices | undefined;

/** Built on first use from the environment, then reused (with its SDK clients) for the life of the Lambda container. */
export function getBaseServices(): BaseServices {
  base ??= createBaseServices(loadConfig());
  return base;
}
