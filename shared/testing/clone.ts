/**
 * What a value looks like after a round trip through a store (JSON, as DynamoDB's document client
 * drops undefined): fakes keep and hand out copies, so a caller never changes what is stored.
 */
export function stored<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}
