/**
 * How a person's answer to an agent's question (ask_user) reads as the question's result: the agent
 * writes it so, a fork's answer edit writes it so, and the console shows the answer without it.
 * Free of zod, so the console bundles it without it.
 */
export const ANSWERED = "The user answered: ";
