import { spawnSync } from "node:child_process";
import { aptInstall } from "./apt.js";

const found = () => ["soffice", "libreoffice"].find((name) => spawnSync("sh", ["-c", `command -v ${name}`]).status === 0);

/**
 * Global set-up of the "office" test project: Debian's libreoffice-impress is installed where it is
 * missing and this user may (root, or sudo without a password), once, before any test starts. On a
 * cold machine the download takes minutes: no test's time limit is spent on it.
 */
export default function setup() {
  if (!found()) aptInstall(["libreoffice-impress"], "to open the decks the tests write");
}

/** LibreOffice for the tests that open a deck as another program would, or the reason they cannot, which they print as they skip. */
export function libreOffice(): { soffice: string } | { missing: string } {
  const soffice = found();
  return soffice
    ? { soffice }
    : {
        missing:
          "LibreOffice is not installed and cannot be here (no apt-get as root or password-less sudo): sudo apt-get install -y --no-install-recommends libreoffice-impress",
      };
}
