import { spawnSync } from "node:child_process";
import { aptInstall } from "./apt.js";

/**
 * LibreOffice for the tests that open a deck as another program would: found on the PATH, or
 * Debian's libreoffice-impress installed where this user may (root, or sudo without a password).
 * Else the reason the test cannot run, which it prints as it skips.
 */
export function libreOffice(): { soffice: string } | { missing: string } {
  const found = () => ["soffice", "libreoffice"].find((name) => spawnSync("sh", ["-c", `command -v ${name}`]).status === 0);
  const soffice = found() ?? (aptInstall(["libreoffice-impress"], "to open the decks the tests write") ? found() : undefined);
  return soffice
    ? { soffice }
    : { missing: "LibreOffice is not installed and cannot be here (no apt-get as root or password-less sudo): sudo apt-get install -y --no-install-recommends libreoffice-impress" };
}
