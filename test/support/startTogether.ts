/** What a test starts and must stop: a local stack (`stop`) or a server (`close`). */
type Stoppable = { stop(): Promise<unknown> } | { close(): Promise<unknown> };

/**
 * Starts several stacks or servers at once and waits for every one to start or fail. When one
 * fails, the ones that did start are stopped before its error is thrown: with Promise.all they kept
 * running, never assigned to the variables the file's afterAll stops, loading the machine (and
 * holding their ports) for the files after it.
 */
export async function startTogether<T extends Stoppable[]>(...starts: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(starts);
  const failure = settled.find((result) => result.status === "rejected");
  if (!failure) return settled.map((result) => (result as PromiseFulfilledResult<Stoppable>).value) as T;
  await Promise.allSettled(settled.flatMap((result) => (result.status === "fulfilled" ? [stopOf(result.value as Stoppable)] : [])));
  throw failure.reason;
}

function stopOf(started: Stoppable): Promise<unknown> {
  return "stop" in started ? started.stop() : started.close();
}
