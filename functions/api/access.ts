import type { Services } from "../../shared/services.js";
import type { Links } from "../../shared/views/runView.js";
import { baseUrl, type HttpEvent } from "../http.js";

/** The API, stream and console addresses a run's view links to. */
export function linksFor(event: HttpEvent, services: Services): Links {
  const api = (services.config.API_URL ?? baseUrl(event)).replace(/\/$/, "");
  return { api, stream: (services.config.STREAM_URL ?? api).replace(/\/$/, ""), console: services.config.CONSOLE_LINKS };
}
