import { spawnSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEBIAN_CHROMIUM, findChromium, MISSING_CHROMIUM } from "../../../support/chromium.js";

/** How the browser tests find their Chromium before they start (test/support/chromium.ts). */
describe("the browser tests' Chromium", () => {
  let dir: string;
  let cache: string;
  const fakeBinary = async (file: string) => {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, "#!/bin/sh\n");
    await chmod(file, 0o755);
    return file;
  };
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "stepwise-chromium-test-"));
    cache = path.join(dir, "ms-playwright");
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("takes CHROMIUM_PATH first, and refuses one that is not an executable", async () => {
    const mine = await fakeBinary(path.join(dir, "my-chrome"));
    expect(findChromium({ CHROMIUM_PATH: mine }, () => true)).toBe(mine);
    expect(() => findChromium({ CHROMIUM_PATH: path.join(dir, "missing") })).toThrow(/CHROMIUM_PATH=.*missing is not an executable file/);
  });

  it("then Debian's, then the newest build in Playwright's cache, else none", async () => {
    const env = { PLAYWRIGHT_BROWSERS_PATH: cache };
    expect(findChromium(env, (file) => file === DEBIAN_CHROMIUM)).toBe(DEBIAN_CHROMIUM);
    const noDebian = (file: string) => file !== DEBIAN_CHROMIUM && spawnSync("test", ["-x", file]).status === 0;
    expect(findChromium(env, noDebian)).toBeUndefined();
    await fakeBinary(path.join(cache, "chromium-1100", "chrome-linux", "chrome"));
    const newest = await fakeBinary(path.join(cache, "chromium-1255", "chrome-linux64", "chrome"));
    expect(findChromium(env, noDebian)).toBe(newest);
  });

  it("stops the browser tests at once with one line when the Chromium named cannot run", () => {
    const run = spawnSync("npx", ["vitest", "run", "test/browser"], {
      env: { ...process.env, CHROMIUM_PATH: path.join(dir, "missing"), NO_COLOR: "1" },
      encoding: "utf8",
    });
    expect(run.status).toBe(1);
    const said = (run.stdout + run.stderr).split("\n").filter((line) => line.trim() && !/^\s*RUN\s+v/.test(line));
    expect(said).toEqual([`CHROMIUM_PATH=${path.join(dir, "missing")} is not an executable file. ${MISSING_CHROMIUM}`]);
  });
});
