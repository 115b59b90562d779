import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { Tool } from "../../../../shared/ports/tools.js";
import { defineTool } from "../../../../shared/tools/tool.js";
import { ToolIndex } from "../../../../shared/tools/toolSearch.js";

const tool = (name: string, description: string): Tool =>
  defineTool({ name, description, access: "read", parameters: z.object({}), run: async () => "" });

const catalogue = [
  tool("weather__getForecast", "Returns the weather forecast for a city."),
  tool("money__convert", "Converts an amount between currencies at today's rate."),
  tool("crm__find_customer", "Looks a customer up by name or e-mail address."),
  tool("crm__create_invoice", "Creates an invoice for a customer."),
  tool("docs__translate", "Übersetzt einen Text ins Englische."),
];
const names = (found: Tool[]) => found.map((t) => t.name);

describe("ToolIndex: tools found by what they do", () => {
  it.each([
    ["currency conversion", "money__convert"],
    ["forecast", "weather__getForecast"],
    ["get forecast", "weather__getForecast"],
    ["invoice a customer", "crm__create_invoice"],
    ["übersetzt", "docs__translate"],
    ["crm__find_customer", "crm__find_customer"],
  ])("%s → %s first", (query, first) => {
    expect(names(new ToolIndex(catalogue).search(query, 3))[0]).toBe(first);
  });

  it("ranks words of the name above words of the description, rare words above common ones", () => {
    // "customer" is in two descriptions and one name; "invoice" in one name and one description.
    expect(names(new ToolIndex(catalogue).search("customer", 5))).toEqual(["crm__find_customer", "crm__create_invoice"]);
  });

  it("finds nothing for words no tool has, and stops at the limit", () => {
    const index = new ToolIndex(catalogue);
    expect(index.search("the a of", 5)).toEqual([]);
    expect(index.search("zebra", 5)).toEqual([]);
    expect(index.search("customer invoice forecast currency", 2)).toHaveLength(2);
  });
});
