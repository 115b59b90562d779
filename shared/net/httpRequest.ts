import type { request } from "node:http";

/**
 * node:http's or node:https's `request`, for a URL's scheme. The modules are taken as CommonJS
 * built-ins on first use, not by an ES import: on Node 22 (Lambda's runtime) an ES import of
 * node:http reads every export, and its WebSocket getters load undici and HTTP/2, about 50 ms of
 * each cold start that imports it; taken this way it costs about 8 ms, and only when a request is made.
 */
export function requestFor(url: URL): typeof request {
  return process.getBuiltinModule(url.protocol === "https:" ? "node:https" : "node:http").request;
}
