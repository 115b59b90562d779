import type { EvalSpend } from "../ports/evalSpend.js";

/** The eval spend port in memory: USD per tenant and day. */
export class MemoryEvalSpend implements EvalSpend {
  readonly byDay = new Map<string, number>();

  async spent(tenantId: string, day: string): Promise<number> {
    return this.byDay.get(`${tenantId}/${day}`) ?? 0;
  }

  async add(tenantId: string, day: string, usd: number): Promise<void> {
    const key = `${tenantId}/${day}`;
    this.byDay.set(key, (this.byDay.get(key) ?? 0) + usd);
  }
}
