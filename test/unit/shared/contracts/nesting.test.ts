import { type AttributeValue, PutItemCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { describe, expect, it } from "vitest";
import { MAX_NESTING_LEVELS, nestedDeeperThan } from "../../../../shared/contracts/nesting.js";
import { useDynalite } from "../../../support/dynalite.js";

/** `containers` arrays within each other around a string: containers + 1 levels, as DynamoDB counts. */
const nestedJson = (containers: number): unknown => {
  let value: unknown = "x";
  for (let i = 0; i < containers; i++) value = i % 2 ? [value] : { v: value };
  return value;
};
const nestedItemValue = (containers: number): AttributeValue => {
  let value: AttributeValue = { S: "x" };
  for (let i = 0; i < containers; i++) value = i % 2 ? { L: [value] } : { M: { v: value } };
  return value;
};

describe("JSON nesting depth", () => {
  it("counts levels as DynamoDB does: 31 objects or arrays around a value are 32 levels, one more is over", () => {
    expect(MAX_NESTING_LEVELS).toBe(32);
    expect(nestedDeeperThan("x")).toBe(false);
    expect(nestedDeeperThan(nestedJson(31))).toBe(false);
    expect(nestedDeeperThan(nestedJson(32))).toBe(true);
    // An empty object or array is a level around nothing: at the 32nd, it is over too.
    expect(nestedDeeperThan(JSON.parse(`${"[".repeat(32)}${"]".repeat(32)}`))).toBe(true);
    // Only the deepest branch counts, wherever it is.
    expect(nestedDeeperThan({ a: 1, b: [1, 2, { c: nestedJson(28) }] })).toBe(false);
    expect(nestedDeeperThan({ a: 1, b: [1, 2, { c: nestedJson(29) }] })).toBe(true);
  });

  it("measures a value 100,000 levels deep without overflowing the stack", () => {
    expect(nestedDeeperThan(JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`))).toBe(true);
  });
});

describe("the local table's nesting limit", () => {
  const dynalite = useDynalite();
  const key = { pk: { S: "NEST#1" }, sk: { S: "A" } };

  it("stores an attribute 32 levels deep and refuses 33 with DynamoDB's ValidationException, in items and in expression values", async () => {
    const client = await dynalite.table().client();
    await client.send(new PutItemCommand({ TableName: "stepwise", Item: { ...key, doc: nestedItemValue(31) } }));
    const refused = { name: "ValidationException", message: expect.stringContaining("Nesting Levels have exceeded supported limits") };
    await expect(
      client.send(new PutItemCommand({ TableName: "stepwise", Item: { ...key, doc: nestedItemValue(32) } })),
    ).rejects.toMatchObject(refused);
    const update = (containers: number) =>
      client.send(
        new UpdateItemCommand({
          TableName: "stepwise",
          Key: key,
          UpdateExpression: "SET doc = :doc",
          ExpressionAttributeValues: { ":doc": nestedItemValue(containers) },
        }),
      );
    await update(31);
    await expect(update(32)).rejects.toMatchObject(refused);
  });
});
