/**
 * DynamoDB stores a value nested at most 32 levels deep, counting the value itself: 31 maps or
 * lists within each other around it (deeper, it refuses the whole write). A client's JSON body
 * reaches the table no deeper than it arrives: the body's own object stands where the item's
 * attribute stands (an edit decision's `arguments` are stored as the interrupt's
 * `resolution.arguments`), so a body is held to the same count.
 */
export const MAX_NESTING_LEVELS = 32;

/**
 * Whether a JSON value has more than `maxLevels` levels as DynamoDB counts them (an object or
 * array is a level, and what it holds one more). Iterative, so no depth can overflow the stack.
 */
export function nestedDeeperThan(value: unknown, maxLevels = MAX_NESTING_LEVELS): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let entry = pending.pop(); entry; entry = pending.pop()) {
    const [current, level] = entry;
    if (current === null || typeof current !== "object") continue;
    if (level >= maxLevels) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) pending.push([child, level + 1]);
  }
  return false;
}
