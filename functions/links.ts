import type { Services } from "../shared/services.js";
import type { Links } from "../shared/views/runView.js";
import { baseUrl, type HttpEvent } from "./http.js";

/** The API, stream and console addresses a run's view links to. */
export function linksFor(event: HttpEvent, services: Services): Links {
  const api = (services.settings.links.api ?? baseUrl(event)).replace(/\/$/, "");
  return { api, stream: (services.settings.links.stream ?? api).replace(/\/$/, ""), console: services.settings.links.stepFunctionsConsole };
}
