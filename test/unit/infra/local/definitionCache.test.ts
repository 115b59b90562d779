import { describe, expect, it } from "vitest";
import { validateDefinition } from "../../../../infra/local/definitionCache.js";

// The cache keeps only definitions that pass this check, and the stack does not check a cached one again.
describe("the definition cache's validation", () => {
  it("accepts a definition Step Functions would accept", async () => {
    await expect(validateDefinition(JSON.stringify({ StartAt: "Done", States: { Done: { Type: "Succeed" } } }))).resolves.toBeUndefined();
  });

  it("refuses one that names a missing state or has a bad path, as CreateStateMachine does", async () => {
    await expect(validateDefinition(JSON.stringify({ StartAt: "Nowhere", States: { Done: { Type: "Succeed" } } }))).rejects.toThrow(
      /Nowhere|StartAt|transition/i,
    );
    await expect(
      validateDefinition(JSON.stringify({ StartAt: "P", States: { P: { Type: "Pass", InputPath: "not a path", End: true } } })),
    ).rejects.toThrow();
  });
});
