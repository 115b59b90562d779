import { describe, expect, it } from "vitest";
import { validatePathParams } from "../../../../functions/api/params.js";

describe("path parameters", () => {
  it("are validated by name before any handler sees them", () => {
    expect(validatePathParams({ runId: "run_abc-1", interruptId: "int_0123" })).toEqual({ runId: "run_abc-1", interruptId: "int_0123" });
    for (const [name, value] of [
      ["interruptId", "i".repeat(1_100)],
      ["deliveryId", "d".repeat(81)],
      ["runId", "run%2Fx"],
      ["sessionId", "s".repeat(65)],
    ]) {
      expect(() => validatePathParams({ [name!]: value }), name).toThrow(
        expect.objectContaining({ statusCode: 400, message: expect.stringContaining(`path.${name}`) }),
      );
    }
  });

  it("a name no route has listed yet still gets a bound (routes added later are covered)", () => {
    expect(validatePathParams({ fileName: "report%20v2.md" })).toEqual({ fileName: "report%20v2.md" });
    expect(() => validatePathParams({ fileName: "f".repeat(257) })).toThrow(expect.objectContaining({ statusCode: 400 }));
  });
});
