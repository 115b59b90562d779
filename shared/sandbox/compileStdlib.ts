import { rename, rm, writeFile } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import { COMPILED_STDLIB } from "./runPython.js";

/**
 * Pyodide ships Python's standard library as source only, so every sandbox process (each starts from
 * nothing) compiled the ~200 modules Python imports while it starts: well over half of its start-up.
 * This compiles the whole library to bytecode once, at install time, with Pyodide's own interpreter,
 * into a zip beside Pyodide's (sources kept, for tracebacks) that every process reads instead. It is
 * made by this trusted build and sits where Pyodide's own files do, read-only to the sandbox; no call
 * ever writes it. Unchecked hash-based .pyc files: the zip is built from the very sources it holds.
 */
async function compileStdlib(target = COMPILED_STDLIB): Promise<string> {
  const { loadPyodide } = await import("pyodide");
  const pyodide = await loadPyodide();
  pyodide.runPython(`
import importlib._bootstrap_external as bootstrap, importlib.util, io, sys, zipfile
library = next(p for p in sys.path if p.endswith(".zip"))
compiled = io.BytesIO()
with zipfile.ZipFile(library) as source, zipfile.ZipFile(compiled, "w", zipfile.ZIP_DEFLATED) as out:
    for entry in source.infolist():
        data = source.read(entry)
        out.writestr(entry, data, zipfile.ZIP_DEFLATED)
        if entry.filename.endswith(".py"):
            # The file name zipimport gives the code it compiles itself, so tracebacks read the same.
            code = compile(data, f"{library}/{entry.filename}", "exec", dont_inherit=True)
            pyc = bootstrap._code_to_hash_pyc(code, importlib.util.source_hash(data), checked=False)
            # Dated like its source: the same install builds the same bytes (the function's asset hash).
            out.writestr(zipfile.ZipInfo(entry.filename + "c", entry.date_time), bytes(pyc), zipfile.ZIP_DEFLATED)
with open("/tmp/compiled.zip", "wb") as file:
    file.write(compiled.getvalue())
`);
  // Written beside the target and renamed over it: a process starting meanwhile never reads half a zip.
  const staging = `${target}.${process.pid}.tmp`;
  try {
    await writeFile(staging, pyodide.FS.readFile("/tmp/compiled.zip"), { mode: 0o444 });
    await rename(staging, target);
  } finally {
    await rm(staging, { force: true });
  }
  return target;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(`Python standard library compiled in ${await compileStdlib()}`);
}
