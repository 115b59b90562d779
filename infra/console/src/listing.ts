/**
 * A listing's rows after a refresh: the newest page replaces the rows it covers, and the older
 * pages already loaded stay (newest first, by `createdAt`; `id` tells rows apart).
 */
export function refreshed<T extends { createdAt: string }>(rows: readonly T[], page: readonly T[], id: (row: T) => string): T[] {
  const oldest = page.at(-1)?.createdAt ?? "";
  return [...page, ...rows.filter((r) => r.createdAt < oldest && !page.some((p) => id(p) === id(r)))];
}
