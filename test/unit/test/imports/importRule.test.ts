import { describe, expect, it } from "vitest";
import { findViolations, layerCycle, unitOf } from "../../../imports/importRule.js";
import { LAYERS, type Layer } from "../../../imports/layers.js";

const file = (path: string, ...imports: string[]) => ({ path, text: imports.map((i) => `import { x } from "${i}";\n`).join("") });

describe("the import rule", () => {
  it("refuses an import from the core to an adapter, naming the file, the line, the target and the rule", () => {
    const files = [
      file("shared/agent/loop.ts", "../contracts/run.js", "../store/runs.js"),
      file("shared/contracts/run.ts"),
      file("shared/store/runs.ts"),
    ];
    expect(findViolations(LAYERS, files)).toEqual([
      {
        file: "shared/agent/loop.ts",
        line: 2,
        target: "shared/store/runs.ts",
        message: expect.stringMatching(/^agent may not import aws adapters \(DynamoDB.*\); agent may import: basics, model, contracts/),
      },
    ]);
  });

  it("sees type-only imports, re-exports and dynamic imports, not only plain imports", () => {
    const files = [
      {
        path: "shared/ports/runs.ts",
        text: 'import type { A } from "../agent/a.js";\nexport { B } from "../run/b.js";\nconst c = await import("../steps/c.js");\n',
      },
      file("shared/agent/a.ts"),
      file("shared/run/b.ts"),
      file("shared/steps/c.ts"),
    ];
    expect(findViolations(LAYERS, files).map((v) => [v.line, v.target])).toEqual([
      [1, "shared/agent/a.ts"],
      [2, "shared/run/b.ts"],
      [3, "shared/steps/c.ts"],
    ]);
  });

  it("keeps the products in infra/ apart: the CLI imports neither the server nor the console", () => {
    const files = [
      file("infra/cli/main.ts", "../../shared/apiClient/client.js", "../../functions/http.js", "../console/src/api.js"),
      file("shared/apiClient/client.ts"),
      file("functions/http.ts"),
      file("infra/console/src/api.ts"),
    ];
    expect(findViolations(LAYERS, files).map((v) => v.target)).toEqual(["functions/http.ts", "infra/console/src/api.ts"]);
  });

  it("lets only the adapters, the handlers, the CDK app and the local emulator import the AWS SDK or the CDK", () => {
    const files = [
      file("shared/tools/x.ts", "@aws-sdk/client-s3"),
      file("shared/store/runs.ts", "@aws-sdk/lib-dynamodb"),
      file("infra/aws/stack.ts", "aws-cdk-lib/aws-lambda"),
      file("infra/cli/main.ts", "constructs"),
    ];
    expect(findViolations(LAYERS, files).map((v) => [v.file, v.target])).toEqual([
      ["shared/tools/x.ts", "@aws-sdk/client-s3"],
      ["infra/cli/main.ts", "constructs"],
    ]);
  });

  it("keeps one handler out of another's folder", () => {
    const files = [
      file("functions/stream/handler.ts", "../http.js", "../api/routes.js"),
      file("functions/http.ts"),
      file("functions/api/routes.ts"),
    ];
    expect(findViolations(LAYERS, files).map((v) => v.message)).toEqual([
      expect.stringMatching(/^stream handler may not import api handler/),
    ]);
  });

  it("forgives a pending import only while it exists, then asks for its entry to be deleted", () => {
    const pending = [{ file: "shared/ports/journal.ts", target: "shared/agent/scopeJournal.ts", until: "item 5" }];
    const withIt = [file("shared/ports/journal.ts", "../agent/scopeJournal.js"), file("shared/agent/scopeJournal.ts")];
    expect(findViolations(LAYERS, withIt, pending)).toEqual([]);
    const without = [file("shared/ports/journal.ts"), file("shared/agent/scopeJournal.ts")];
    expect(findViolations(LAYERS, without, pending).map((v) => v.message)).toEqual([
      expect.stringMatching(/^no longer imported \(item 5\)/),
    ]);
  });

  it("holds every file in exactly the closest layer, and says when a file is in none", () => {
    expect(unitOf(LAYERS, "shared/llm/openaiModel.ts")?.name).toBe("aws adapters");
    expect(unitOf(LAYERS, "shared/llm/types.ts")?.name).toBe("model");
    expect(findViolations(LAYERS, [file("scripts/x.ts")]).map((v) => v.message)).toEqual([
      expect.stringMatching(/^no layer holds this file/),
    ]);
  });

  it("finds a cycle in the layers' declared imports, so lower and higher keep their meaning", () => {
    expect(layerCycle(LAYERS)).toBeUndefined();
    const cyclic: Layer[] = [
      { name: "a", paths: ["a/"], imports: ["b"], holds: "" },
      { name: "b", paths: ["b/"], imports: ["a"], holds: "" },
    ];
    expect(layerCycle(cyclic)).toEqual(["a", "b", "a"]);
  });
});
