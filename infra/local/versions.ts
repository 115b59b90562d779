import { STEP_HANDLERS, type StepName } from "../aws/handlers.js";

/** The version number the first deploy publishes (of each step function and of the state machine). */
export const FIRST_VERSION = 1;

/**
 * Lambda's published versions, locally: a deploy publishes every step function as its next version,
 * each with the handler module it runs, and a definition that names those versions. An execution
 * calls the version-qualified ARNs its definition names, so what it runs never changes under it.
 */
export class LocalFunctionVersions {
  /** Version-qualified function ARN → the step and the handler module that version runs. */
  private readonly handlers = new Map<string, { step: StepName; entry: string }>();
  private published = 0;

  /**
   * @param definition the synthesized definition, naming version FIRST_VERSION of each function
   * @param functions its version-qualified function ARNs → the step each runs
   */
  constructor(
    private readonly definition: string,
    private readonly functions: ReadonlyMap<string, StepName>,
  ) {}

  /**
   * Publishes the next version of every step function, running the project's handlers or, per step,
   * another module (a changed handler), and returns the state machine definition that names them.
   */
  publish(changed: Partial<Record<StepName, string>> = {}): string {
    const version = FIRST_VERSION + this.published++;
    let definition = this.definition;
    for (const [arn, step] of this.functions) {
      const qualified = `${arn.slice(0, arn.lastIndexOf(":"))}:${version}`;
      definition = definition.replaceAll(JSON.stringify(arn), JSON.stringify(qualified));
      this.handlers.set(qualified, { step, entry: changed[step] ?? STEP_HANDLERS[step] });
    }
    return definition;
  }

  /** The step and handler module a version-qualified function ARN runs, if that version was published. */
  handler(arn: string): { step: StepName; entry: string } | undefined {
    return this.handlers.get(arn);
  }
}
