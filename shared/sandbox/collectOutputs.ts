import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync, type Stats } from "node:fs";
import path from "node:path";
import type { SandboxOutput } from "../contracts/sandbox.js";

/** What one call may hand back: Lambda answers at most 6 MB, and base64 makes bytes a third bigger. */
export const OUTPUT_LIMITS = { files: 50, bytes: 4 * 1024 * 1024, depth: 5 };

export interface CollectedOutputs {
  outputs: SandboxOutput[];
  /** One line per entry left out, saying what it is and why. */
  refused: string[];
}

/**
 * Reads a sandbox's output folder after its process has exited, trusting nothing in it: files in
 * subfolders come back as `sub/name`; symbolic links, hard links, devices, sockets and pipes are
 * refused (never followed or opened), as is whatever passes the limits. The other outputs are kept.
 */
export function collectOutputs(folder: string): CollectedOutputs {
  const outputs: SandboxOutput[] = [];
  const refused: string[] = [];
  let bytes = 0;
  const walk = (dir: string, prefix: string, depth: number) => {
    for (const name of readdirSync(dir).sort()) {
      const shown = `${prefix}${name}`;
      const full = path.join(dir, name);
      const stat = lstatSync(full);
      if (stat.isDirectory()) {
        if (depth >= OUTPUT_LIMITS.depth) refused.push(`${shown}/: folders nest deeper than ${OUTPUT_LIMITS.depth} levels, not saved`);
        else walk(full, `${shown}/`, depth + 1);
        continue;
      }
      const why = kindRefused(stat);
      if (why) refused.push(`${shown}: ${why}, not saved`);
      else if (outputs.length >= OUTPUT_LIMITS.files) refused.push(`${shown}: more than ${OUTPUT_LIMITS.files} files, not saved`);
      else if (bytes + stat.size > OUTPUT_LIMITS.bytes)
        refused.push(`${shown}: the outputs would pass ${OUTPUT_LIMITS.bytes} bytes, not saved`);
      else {
        const body = readRegularFile(full, stat.size);
        if (!body) refused.push(`${shown}: changed while it was read, not saved`);
        else {
          bytes += body.byteLength;
          outputs.push({ name: shown, base64: body.toString("base64") });
        }
      }
    }
  };
  walk(folder, "", 0);
  return { outputs, refused };
}

function kindRefused(stat: Stats): string | undefined {
  if (stat.isSymbolicLink()) return "a symbolic link";
  if (!stat.isFile()) return "not a regular file (a device, socket or pipe)";
  // A second name for a file elsewhere (one the code could not read itself) is not an output.
  if (stat.nlink > 1) return "a hard link";
  return undefined;
}

/** Opens without following links or blocking on pipes, and reads only what lstat saw. */
function readRegularFile(full: string, size: number): Buffer | undefined {
  const fd = openSync(full, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size !== size || stat.nlink > 1) return undefined;
    const body = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, body, read, size - read, read);
      if (n === 0) return undefined;
      read += n;
    }
    return body;
  } finally {
    closeSync(fd);
  }
}
