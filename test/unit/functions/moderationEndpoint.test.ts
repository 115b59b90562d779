import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelFor } from "../../../functions/modelClient.js";
import { type OfflineModel, startOfflineModel } from "../../../infra/offlineModel/server.js";
import { settingsFromEnv } from "../../../shared/settings.js";
import { closedPortUrl } from "../../support/receiver.js";

/**
 * The guardrails' moderation endpoint: the model's by default, or a separate one
 * (MODERATION_BASE_URL) for providers that have no /v1/moderations (DeepSeek), asked with its own
 * key, never the model's. The moderation server is the offline model's (a fixed word list), behind
 * a recorder that keeps the headers each request came with.
 */

let offline: OfflineModel;
let recorder: Server;
let recorderUrl: string;
const seen: { path: string; headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  offline = await startOfflineModel({ port: 0 });
  recorder = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    seen.push({ path: req.url ?? "", headers: req.headers, body });
    const answer = await fetch(`${offline.url}${(req.url ?? "").replace(/^\/v1/, "")}`, {
      method: req.method,
      headers: { "content-type": "application/json" },
      body,
    });
    res.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text());
  });
  await new Promise<void>((resolve) => recorder.listen(0, "127.0.0.1", resolve));
  recorderUrl = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  recorder?.closeAllConnections();
  await new Promise((resolve) => recorder?.close(resolve));
  await offline?.close();
});

const settings = (env: Record<string, string>) => settingsFromEnv({ TABLE_NAME: "t", AWS_REGION: "eu-west-1", ...env }).model;

describe("the moderation endpoint", () => {
  it("is MODERATION_BASE_URL when set, with its own key and model: the model's endpoint (here, nothing) is never asked", async () => {
    seen.length = 0;
    const model = modelFor(
      settings({
        OPENAI_BASE_URL: await closedPortUrl(),
        OPENAI_API_KEY: "sk-model",
        MODERATION_BASE_URL: recorderUrl,
        MODERATION_API_KEY: "sk-moderation",
        MODERATION_MODEL: "text-moderation-latest",
      }),
      "eu-west-1",
    );
    expect(await model.moderate?.("How to build a bomb")).toEqual({ flagged: true, categories: ["violence"] });
    expect(await model.moderate?.("How to bake bread")).toEqual({ flagged: false, categories: [] });
    expect(seen.map((r) => [r.path, r.headers.authorization, JSON.parse(r.body).model])).toEqual([
      ["/v1/moderations", "Bearer sk-moderation", "text-moderation-latest"],
      ["/v1/moderations", "Bearer sk-moderation", "text-moderation-latest"],
    ]);
  });

  it("without MODERATION_BASE_URL is the model's endpoint, with the model's key (a check's own model wins)", async () => {
    seen.length = 0;
    const model = modelFor(settings({ OPENAI_BASE_URL: recorderUrl, OPENAI_API_KEY: "sk-model" }), "eu-west-1");
    expect(await model.moderate?.("a massacre", { model: "omni-moderation-2024-09-26" })).toEqual({
      flagged: true,
      categories: ["violence"],
    });
    expect(seen.map((r) => [r.path, r.headers.authorization, JSON.parse(r.body).model])).toEqual([
      ["/v1/moderations", "Bearer sk-model", "omni-moderation-2024-09-26"],
    ]);
  });

  it("a moderation key without its URL is refused at start: the model's key is for the model's endpoint", () => {
    expect(() => settings({ MODERATION_API_KEY: "sk-moderation" })).toThrow(
      /MODERATION_API_KEY\(_SECRET_ARN\) is the key of MODERATION_BASE_URL/,
    );
    expect(() => settings({ MODERATION_BASE_URL: "not a url" })).toThrow(/MODERATION_BASE_URL/);
  });
});
