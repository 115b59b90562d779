import { StepwiseClient } from "../../../../shared/apiClient/client.js";
import { ApiError } from "../../../../shared/apiClient/errors.js";
import { apiKey } from "../api.js";
import { announce, field, h, render } from "../dom.js";

/** Sign in with an API key: checked against the API, then kept in session storage only. */
export function signInPage(app: HTMLElement) {
  const input = h("input", { type: "password", name: "apiKey", autocomplete: "off", required: true, spellcheck: "false" });
  const error = h("p", { class: "error", role: "alert", hidden: true });
  const submit = h("button", { type: "submit" }, "Sign in");
  const form = h(
    "form",
    {
      class: "card narrow",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const key = input.value.trim();
        submit.disabled = true;
        error.hidden = true;
        try {
          await new StepwiseClient("", key).listRuns({ limit: 1 });
          apiKey.set(key);
          announce("Signed in.");
          location.hash = "#/runs";
        } catch (err) {
          error.textContent =
            err instanceof ApiError && err.status === 401 ? "That API key is not valid. Check it and try again." : (err as Error).message;
          error.hidden = false;
          input.focus();
        } finally {
          submit.disabled = false;
        }
      },
    },
    h("h1", {}, "Sign in"),
    h("p", {}, "Use an API key. It stays in this browser tab and is never put in a URL."),
    field("API key", input, "npm start prints one; on AWS, npm run create-api-key makes one."),
    error,
    submit,
  );
  render(app, form);
  input.focus();
}
