import { StepwiseClient } from "../../../shared/apiClient/client.js";

/** The key lives in session storage (gone when the tab closes), never in a URL. */
const KEY = "stepwise.apiKey";

export const apiKey = {
  get: () => sessionStorage.getItem(KEY),
  set: (key: string) => sessionStorage.setItem(KEY, key),
  clear: () => sessionStorage.removeItem(KEY),
};

/** The public API at this page's origin, with this tab's key; a run's stream opens with a short-lived token for it. */
export const client = new StepwiseClient("", apiKey.get, { streamAuth: "token" });

export const enc = encodeURIComponent;
