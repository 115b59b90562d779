import { describe, expect, it } from "vitest";
import { allowedOrigin, preflight, withCors } from "../../../functions/cors.js";
import type { HttpEvent } from "../../../functions/http.js";

const request = (origin: string | undefined, method = "GET", headers: Record<string, string> = {}) =>
  ({ headers: { ...(origin ? { origin } : {}), ...headers }, requestContext: { http: { method } } }) as unknown as HttpEvent;

describe("CORS for the API and the stream", () => {
  it("allows no other origin by default", () => {
    const config = { allowedOrigins: "" };
    expect(allowedOrigin(request("https://app.example.com"), config)).toBeUndefined();
    expect(withCors({ statusCode: 200, headers: {} }, request("https://app.example.com"), config).headers).toEqual({});
    expect(preflight(request("https://app.example.com", "OPTIONS", { "access-control-request-method": "GET" }), config, "GET")).toEqual({
      statusCode: 204,
      headers: { vary: "Origin" },
      body: "",
    });
  });

  it("allows the configured origins, and the console's own origin where the stream is on another", () => {
    const config = {
      allowedOrigins: "https://app.example.com, https://admin.example.com/",
      consoleOrigin: "https://abc.execute-api.eu-west-1.amazonaws.com",
    };
    expect(allowedOrigin(request("https://admin.example.com"), config)).toBe("https://admin.example.com");
    expect(allowedOrigin(request("https://abc.execute-api.eu-west-1.amazonaws.com"), config)).toBe(
      "https://abc.execute-api.eu-west-1.amazonaws.com",
    );
    expect(allowedOrigin(request("https://evil.example.net"), config)).toBeUndefined();
    expect(allowedOrigin(request(undefined), config)).toBeUndefined();
    const answer = preflight(
      request("https://app.example.com", "OPTIONS", { "access-control-request-method": "POST" }),
      config,
      "GET, POST",
    );
    expect(answer?.headers).toMatchObject({
      "access-control-allow-origin": "https://app.example.com",
      "access-control-allow-methods": "GET, POST",
    });
  });

  it("answers any origin only when told to with *", () => {
    expect(allowedOrigin(request("https://anywhere.example.org"), { allowedOrigins: "*" })).toBe("*");
  });
});
