import { execFileSync, spawnSync } from "node:child_process";

/** apt-get as root, or through sudo when it asks for no password; undefined when neither can run. */
export function aptRunner(): string[] | undefined {
  const has = (command: string) => spawnSync("sh", ["-c", `command -v ${command}`]).status === 0;
  if (!has("apt-get")) return undefined;
  if (process.getuid?.() === 0) return [];
  if (has("sudo") && spawnSync("sudo", ["-n", "true"]).status === 0) return ["sudo", "-n"];
  return undefined;
}

/** Installs Debian packages (without recommends) where this user may; false when it may not or apt-get fails. */
export function aptInstall(packages: string[], why: string): boolean {
  const runner = aptRunner();
  if (!runner) return false;
  console.log(`Installing Debian's ${packages.join(", ")} ${why} (apt-get install)…`);
  const apt = (...args: string[]) => {
    const [command, ...rest] = [...runner, "apt-get", ...args];
    execFileSync(command!, rest, { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  };
  try {
    apt("update");
    apt("install", "-y", "--no-install-recommends", ...packages);
    return true;
  } catch {
    return false;
  }
}
