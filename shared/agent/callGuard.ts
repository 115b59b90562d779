import { TERMINAL_STATUSES } from "../contracts/terminal.js";
import { quietly } from "./backgroundWrites.js";
import type { LoopPorts, RunScope } from "./loop.js";
import type { ScopeJournal } from "./scopeJournal.js";

/** Why a model call in flight was aborted: the run ended while the model was thinking. */
const RUN_ENDED = new Error("The run ended while the model was thinking.");

/** What one model call goes ahead with: the signal that aborts it, and whether the run ended meanwhile. */
export interface CallCheck {
  signal: AbortSignal;
  /** True if the run had ended by the time the call was made (the call was aborted, its reply is void). */
  ended(): Promise<boolean>;
}

/**
 * Keeps the table off the model's critical path. Before each model call the last round's records
 * must be written and the run must still be going. The first check of a turn is awaited (an ended
 * run gets no call); later checks are one round trip made while the model thinks on the next call,
 * and abort that call if the run ended meanwhile or the records could not be written.
 */
export class CallGuard {
  private known: boolean | Promise<boolean> | undefined;

  constructor(
    private readonly run: RunScope<LoopPorts>,
    private readonly journal: ScopeJournal,
    /** Whether the run is still going, when the caller has just read it (saves the first round trip). */
    knownActive?: boolean | Promise<boolean>,
  ) {
    this.known = knownActive;
  }

  /** Before round `round`'s model call (not a replayed one): undefined if the run has ended (no call is made). */
  async beforeCall(round: number): Promise<CallCheck | undefined> {
    const abort = new AbortController();
    if (round === 0 || this.known !== undefined) {
      const active = await (this.known ?? this.writtenAndStillGoing());
      this.known = undefined;
      return active ? { signal: abort.signal, ended: async () => false } : undefined;
    }
    const ended = quietly(
      this.writtenAndStillGoing().then(
        (active) => {
          if (active) return false;
          abort.abort(RUN_ENDED);
          return true;
        },
        (error: unknown): never => {
          abort.abort(error);
          throw error;
        },
      ),
    );
    return { signal: abort.signal, ended: () => ended };
  }

  /** One round trip: the records not yet written are written, and the run's status read. */
  writtenAndStillGoing(): Promise<boolean> {
    return Promise.all([stillGoing(this.run), this.journal.flush()]).then(([active]) => active);
  }
}

/** A cheap read of the run's status: false once it has ended (or is gone). */
async function stillGoing(run: RunScope<LoopPorts>): Promise<boolean> {
  const status = await run.ports.runs.status(run.runId);
  return status !== undefined && !TERMINAL_STATUSES.has(status);
}
