import { loadConfig } from "../shared/config.js";
import { createServices, type Services } from "../shared/services.js";

let services: Services | undefined;

/** Built on first use from the environment, then reused for the life of the Lambda container. */
export function getServices(): Services {
  services ??= createServices(loadConfig());
  return services;
}
