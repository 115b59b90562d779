import { describe, expect, it } from "vitest";
import { localApiKey } from "../../../../infra/local/localApiKey.js";
import { useTempDirs } from "../../../support/tempDirs.js";

const tempDir = useTempDirs();

describe("the local API key", () => {
  it("is one key per data folder: made at the first start, the same at the next", () => {
    const dir = tempDir();
    const first = localApiKey(undefined, dir);
    const second = localApiKey(undefined, dir);
    expect(first).toMatchObject({ source: "new", key: expect.stringMatching(/^sk_local_[0-9a-f]{32}$/) });
    expect(second).toEqual({ key: first.key, source: "kept" });
    expect(localApiKey(undefined, tempDir()).key).not.toBe(first.key);
  });

  it("is STEPWISE_API_KEY when given, and a fresh one in memory", () => {
    expect(localApiKey("sk_mine", tempDir())).toEqual({ key: "sk_mine", source: "given" });
    expect(localApiKey(undefined, undefined).key).not.toBe(localApiKey(undefined, undefined).key);
  });
});
