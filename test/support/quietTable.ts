/**
 * Waits until the table stops changing: `scans` snapshots in a row, `gapMs` apart, equal to the one
 * before (at most `maxMs`), and gives the last. A run's end is followed by writes in the background
 * (the notifier records its state-transition count, sends its notification, delivers its webhooks),
 * which must not land inside a check that a request changed nothing. Under load they can come
 * seconds late, so one equal pair a moment apart is not enough.
 */
export async function untilQuiet(snapshot: () => Promise<string>, { gapMs = 400, scans = 3, maxMs = 60_000 } = {}): Promise<string> {
  let last = await snapshot();
  const giveUpAt = Date.now() + maxMs;
  for (let quiet = 0; quiet < scans && Date.now() < giveUpAt; ) {
    await new Promise((resolve) => setTimeout(resolve, gapMs));
    const now = await snapshot();
    quiet = now === last ? quiet + 1 : 0;
    last = now;
  }
  return last;
}
