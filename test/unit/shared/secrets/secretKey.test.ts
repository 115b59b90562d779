import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgettingRefusedKey } from "../../../../functions/modelClient.js";
import { OpenAIModel } from "../../../../shared/llm/openaiModel.js";
import { SECRET_KEY_TTL_MS, SecretKey } from "../../../../shared/secrets/secretKey.js";

/**
 * The model key from Secrets Manager is not kept for a container's life: a key fixed or rotated in
 * the secret is used after the provider refused the old one (401), and within SECRET_KEY_TTL_MS anyway.
 * The provider is an OpenAI-compatible server that accepts one key; the secret is a stand-in that
 * answers GetSecretValue with what it currently holds.
 */
let server: Server;
let url: string;
const acceptedKey = "new-key";
let accepted = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    if (req.headers.authorization !== `Bearer ${acceptedKey}`) {
      res.writeHead(401, { "content-type": "application/json" });
      return void res.end(
        JSON.stringify({ error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } }),
      );
    }
    accepted++;
    // A streamed reply, as Chat Completions sends one with stream: true.
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta: object, finish: string | null, usage?: object) =>
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
    res.end(
      chunk({ role: "assistant", content: "ok" }, null) +
        chunk({}, "stop", { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }) +
        "data: [DONE]\n\n",
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function secret(initial: string) {
  const state = { value: initial, reads: 0 };
  const client = {
    send: async () => {
      state.reads++;
      return { SecretString: state.value };
    },
  } as any;
  return { state, client };
}

describe("the model key", () => {
  it("is read again after the provider refused it (401): the fixed key is used on the next call", async () => {
    const { state, client } = secret("old-key");
    const key = new SecretKey(client, "arn:secret");
    const model = forgettingRefusedKey(
      new OpenAIModel({ model: "m", baseURL: url, apiKey: () => key.read(), maxRetries: 0, timeoutMs: 10_000 }),
      key,
    );
    const ask = () => model.complete({ messages: [{ role: "user", content: "hi" }] });
    await expect(ask()).rejects.toThrow(/401/);
    state.value = "new-key"; // the operator fixes the secret
    await ask();
    expect([state.reads, accepted]).toEqual([2, 1]);
    await ask();
    expect(state.reads).toBe(2); // a good key is not read on every call
  });

  it("is read at most once per SECRET_KEY_TTL_MS while it works, then again", async () => {
    let now = 0;
    const { state, client } = secret("k1");
    const key = new SecretKey(client, "arn:secret", () => now);
    expect(await key.read()).toBe("k1");
    state.value = "k2";
    now = SECRET_KEY_TTL_MS - 1;
    expect(await key.read()).toBe("k1");
    now = SECRET_KEY_TTL_MS;
    expect(await key.read()).toBe("k2");
    expect(state.reads).toBe(2);
  });

  it("a failed read is not kept: the next call reads again", async () => {
    let fail = true;
    const client = {
      send: async () => {
        if (fail) throw new Error("throttled");
        return { SecretString: "k" };
      },
    } as any;
    const key = new SecretKey(client, "arn:secret");
    await expect(key.read()).rejects.toThrow("throttled");
    fail = false;
    expect(await key.read()).toBe("k");
  });
});
