import { describe, expect, it } from "vitest";
import { HANDLER_USES } from "../../../../functions/uses.js";
import { synthesizeStack } from "../../../../infra/local/synth.js";

/** The KMS key that seals tool source headers: who may seal (the API) and who may only open (agents). */
describe("the stack's tool source key", () => {
  const { template } = synthesizeStack();
  const resources = Object.entries(template.Resources) as [string, any][];
  const [keyId, key] = resources.find(([, r]) => r.Type === "AWS::KMS::Key")!;
  const functions = resources.filter(([, r]) => r.Type === "AWS::Lambda::Function");
  const policiesOf = (functionId: string) => {
    const role = functions.find(([id]) => id === functionId)![1].Properties.Role["Fn::GetAtt"][0];
    return resources.filter(([, r]) => r.Type === "AWS::IAM::Policy" && r.Properties.Roles.some((ref: any) => ref.Ref === role));
  };
  const kmsActions = (functionId: string) =>
    policiesOf(functionId)
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement)
      .filter((s: any) => JSON.stringify(s.Resource).includes(keyId))
      .flatMap((s: any) => [s.Action].flat());

  it("rotates, and exactly the functions that list tools or seal their headers know it", () => {
    expect(key.Properties.EnableKeyRotation).toBe(true);
    const knowsKey = Object.entries(HANDLER_USES).map(([name, uses]) => {
      const [, fn] = functions.find(([id]) => new RegExp(`^Stepwise(Steps)?${name}[A-F0-9]`).test(id))!;
      const ports: readonly string[] = uses.ports;
      return {
        name,
        reads: ports.includes("tools") || ports.includes("secrets"),
        knows: JSON.stringify(fn.Properties.Environment?.Variables?.TOOL_SOURCES_KMS_KEY_ID ?? "").includes(keyId),
      };
    });
    expect(knowsKey.filter((f) => f.reads).length).toBeGreaterThan(5);
    for (const f of knowsKey) expect(f, f.name).toMatchObject({ knows: f.reads });
  });

  it("lets the API seal and open, and agents only open", () => {
    const api = functions.find(([id]) => /^(Stepwise)?Api/.test(id))![0];
    expect([...kmsActions(api)].sort()).toEqual(["kms:Decrypt", "kms:GenerateDataKey"]); // no Encrypt or ReEncrypt: sealing is envelope encryption
    const agent = functions.find(([id]) => /ExecuteTask/.test(id))![0];
    expect(kmsActions(agent)).toContain("kms:Decrypt");
    expect(kmsActions(agent).some((a: string) => a.startsWith("kms:GenerateDataKey") || a === "kms:Encrypt")).toBe(false);
  });
});
