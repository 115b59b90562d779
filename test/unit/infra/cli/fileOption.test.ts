import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stepwise } from "../../../support/inProcessCli.js";

/**
 * `stepwise run --file` with a file that is not there: a usage error before anything is sent. The
 * API's address is one nothing listens on, so a command that did send would end with a connection
 * error (exit 3) instead. Uploading files that are there: test/integration/workTools.test.ts.
 */
describe("stepwise run --file", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "stepwise-cli-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("a --file that does not exist is a usage error (exit 2) and nothing is submitted", async () => {
    const missing = path.join(dir, "missing.csv");
    const result = await stepwise(["run", "Analyse the attached CSV", "--file", missing, "--url", "http://127.0.0.1:9", "--api-key", "k"]);
    expect(result.stderr).toMatch(/missing\.csv: no such file/);
    expect(result.code).toBe(2);
    expect(result.stdout).not.toMatch(/submitted/);
  });
});
