import { createServices, type Services } from "../shared/services.js";
import { getBaseServices } from "./baseServices.js";

let services: Services | undefined;

/** The base services with the model and the tools, built on first use and reused for the life of the Lambda container. */
export function getServices(): Services {
  const base = getBaseServices();
  services ??= createServices(base.config, { base });
  return services;
}
