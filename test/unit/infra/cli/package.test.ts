import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCli, packagesLoadedBy } from "../../../../infra/cli/build.js";

/**
 * The CLI is its own package (infra/cli/package.json): a bundle that loads only the npm packages
 * the package lists, so installing it brings none of the server's (Pyodide, exceljs, the AWS SDK…).
 */
const cliPackage = JSON.parse(await readFile("infra/cli/package.json", "utf8"));
const rootPackage = JSON.parse(await readFile("package.json", "utf8"));
let installed: string;
let bundle: string;

beforeAll(async () => {
  installed = await mkdtemp(path.join(tmpdir(), "stepwise-cli-"));
  bundle = await buildCli(path.join(installed, cliPackage.bin.stepwise));
  // As npm installs it: the bundle beside a node_modules holding only the package's dependencies.
  await mkdir(path.join(installed, "node_modules"), { recursive: true });
  for (const name of Object.keys(cliPackage.dependencies)) {
    await mkdir(path.dirname(path.join(installed, "node_modules", name)), { recursive: true });
    await symlink(path.resolve("node_modules", name), path.join(installed, "node_modules", name), "dir");
  }
});
afterAll(() => rm(installed, { recursive: true, force: true }));

describe("the CLI package", () => {
  it("depends on exactly the packages its bundle loads, in the ranges the repository tests", async () => {
    expect(await packagesLoadedBy(bundle)).toEqual(Object.keys(cliPackage.dependencies).sort());
    for (const [name, range] of Object.entries(cliPackage.dependencies)) expect(range, name).toBe(rootPackage.dependencies[name]);
    expect(cliPackage.engines).toEqual(rootPackage.engines);
  });

  it("runs from outside the repository with nothing but its dependencies", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [bundle, "--help"], { cwd: installed });
    expect(stdout).toMatch(/^stepwise — run tasks on a Stepwise stack/);
    expect(stdout).toContain('stepwise run "<task>"');
  });
});
