// The Python sandbox, one call per OS process: Pyodide (CPython on WebAssembly) started by
// runPython.ts under Node's permission model, with an empty environment and, where the machine
// allows it, no network and a user of its own. Python-level blocks below are only a first fence:
// code that gets past them reaches a JavaScript realm in a process that has nothing to give.
// Plain JavaScript so that it loads the same way from the sources, the tests and the Lambda bundle.
//
// argv: <Pyodide's module URL> <scratch folder> <memory limit in bytes> <standard library zip, compiled>
// The scratch folder holds files/ (the call's inputs, written by the parent) and output/ (what the
// code leaves there is copied out after it ran; the parent checks every entry itself).
// Protocol: "ready\n" on fd 3 once Pyodide is loaded; then the job ({code}) on stdin until EOF;
// then the result ({value, error, refused}) as one JSON line on fd 3, and the process exits.
import fs from "node:fs";

const [pyodideUrl, scratch, memoryLimit, stdLibURL] = process.argv.slice(2);
const memoryBytes = Number(memoryLimit);
/** What one call may hand back (collectOutputs.ts checks it again): files, bytes, folder depth. */
const OUTPUT_LIMITS = { files: 50, bytes: 4 * 1024 * 1024, depth: 5, reasons: 99 };
/** Bytes the interpreter's in-memory files hold: they count against the memory limit too. */
let fileBytes = 0;

// Memory limit: WebAssembly memory lives outside the V8 heap (--max-old-space-size does not see it),
// so the cap is on its growth. Emscripten turns a refused grow into a failed malloc: MemoryError.
const grow = WebAssembly.Memory.prototype.grow;
WebAssembly.Memory.prototype.grow = function (pages) {
  if (this.buffer.byteLength + pages * 65536 + fileBytes > memoryBytes) throw new RangeError("sandbox memory limit");
  return grow.call(this, pages);
};

// Pyodide's host file-system layer reads fs constants through process.binding when it loads; the
// permission model refuses process.binding itself, so it gets the constants and nothing else.
process.binding = (name) => {
  if (name === "constants") return { fs: fs.constants };
  throw new Error(`process.binding('${name}') is not available in the sandbox`);
};

const { loadPyodide } = await import(pyodideUrl);
const pyodide = await loadPyodide({
  stdLibURL,
  env: { HOME: "/sandbox", LANG: "C.UTF-8" },
  stdout: (text) => process.stdout.write(`${text}\n`),
  stderr: (text) => process.stderr.write(`${text}\n`),
});
pyodide.setStdin({ error: true });
const { FS } = pyodide;
// No network from Python: every socket fails (Emscripten would tunnel it over WebSockets).
pyodide._module.SOCKFS.createSocket = () => {
  throw new FS.ErrnoError(63); // EPERM
};
for (const name of ["fetch", "WebSocket", "XMLHttpRequest", "EventSource", "Request", "navigator", "require"]) {
  try {
    delete globalThis[name];
  } catch {}
}
for (const name of ["js", "pyodide_js"]) pyodide.unregisterJsModule(name);
boundFiles(pyodide._module.MEMFS, () => pyodide._module.HEAP8.byteLength);

fs.writeSync(3, "ready\n");

const input = [];
for await (const chunk of process.stdin) input.push(chunk);
const job = JSON.parse(Buffer.concat(input).toString("utf8"));
const started = performance.now();
FS.mkdirTree("/sandbox/files");
FS.mkdirTree("/sandbox/output");
for (const name of fs.readdirSync(`${scratch}/files`)) {
  FS.writeFile(`/sandbox/files/${name}`, fs.readFileSync(`${scratch}/files/${name}`), { mode: 0o444 });
}
FS.chmod("/sandbox/files", 0o555);
FS.writeFile("/sandbox/.main.py", job.code);
try {
  pyodide.runPython(DRIVER());
} catch {
  // The driver reports through /sandbox/.result.json; Pyodide cannot hand back a value once its
  // own modules are gone, and that is expected.
}
let result;
try {
  result = JSON.parse(FS.readFile("/sandbox/.result.json", { encoding: "utf8" }));
} catch {
  result = { error: "The sandbox could not report a result.", value: null };
}
const refused = [];
copyOut(refused);
fs.writeSync(3, `${JSON.stringify({ value: result.value, error: result.error, refused, ms: performance.now() - started })}\n`);
// Nothing the code scheduled gets a turn of the event loop: the process ends now.
process.exit(0);

/**
 * Every file the code writes from Python lives in Emscripten's in-memory file system, as typed
 * arrays outside WebAssembly memory: each write that would grow them past what the memory limit
 * leaves (beside WebAssembly memory) fails with ENOSPC, and WebAssembly memory cannot grow into
 * what the files hold. Capacities are counted per file, so removing or truncating a file frees it.
 */
function boundFiles(MEMFS, wasmBytes) {
  const counted = new WeakMap();
  const recount = (node) => {
    const now = node?.contents?.length ?? 0;
    fileBytes += now - (counted.get(node) ?? 0);
    counted.set(node, now);
  };
  const refuse = (growth) => {
    if (growth > 0 && wasmBytes() + fileBytes + growth > memoryBytes) throw new FS.ErrnoError(51); // ENOSPC
  };
  // New nodes take their operations from MEMFS.ops_table, which copied them from stream_ops and
  // node_ops when the file system started: both places are bound.
  const { write } = MEMFS.stream_ops;
  MEMFS.stream_ops.write = MEMFS.ops_table.file.stream.write = function (stream, buffer, offset, length, position, canOwn) {
    const node = stream.node;
    const capacity = node.contents?.length ?? 0;
    const needed = position + length;
    // What MEMFS would allocate: the size needed, or the capacity doubled (by 1/8 past 1 MB).
    if (needed > capacity) refuse(Math.max(needed, Math.floor(capacity * (capacity < 1024 * 1024 ? 2 : 1.125))) - capacity);
    const written = write.call(this, stream, buffer, offset, length, position, canOwn);
    recount(node);
    return written;
  };
  const { resizeFileStorage } = MEMFS;
  MEMFS.resizeFileStorage = (node, size) => {
    refuse(size - (node.contents?.length ?? 0));
    resizeFileStorage(node, size);
    recount(node);
  };
  const { unlink } = MEMFS.node_ops;
  MEMFS.node_ops.unlink = MEMFS.ops_table.dir.node.unlink = function (parent, name) {
    const node = parent.contents?.[name];
    unlink.call(this, parent, name);
    if (node) {
      fileBytes -= counted.get(node) ?? 0;
      counted.delete(node);
    }
  };
}

/**
 * Copies the interpreter's output/ to the scratch folder: folders and regular files within the
 * limits, each checked by its size before any byte is copied, so the host's scratch never holds
 * more than the limit; what is left out is named, with why (the first 100 such lines).
 */
function copyOut(refused) {
  const accepted = [];
  let bytes = 0;
  let left = 0;
  const refuse = (line) => (refused.length < OUTPUT_LIMITS.reasons ? refused.push(line) : left++);
  const walk = (from, prefix, depth) => {
    for (const name of FS.readdir(from).sort()) {
      if (name === "." || name === "..") continue;
      const { mode, size } = FS.lstat(`${from}/${name}`);
      const shown = `${prefix}${name}`;
      if (FS.isDir(mode)) {
        if (depth >= OUTPUT_LIMITS.depth) refuse(`${shown}/: folders nest deeper than ${OUTPUT_LIMITS.depth} levels, not saved`);
        else walk(`${from}/${name}`, `${shown}/`, depth + 1);
      } else if (!FS.isFile(mode)) refuse(`${shown}: ${FS.isLink(mode) ? "a symbolic link" : "not a regular file"}, not saved`);
      else if (accepted.length >= OUTPUT_LIMITS.files) refuse(`${shown}: more than ${OUTPUT_LIMITS.files} files, not saved`);
      else if (bytes + size > OUTPUT_LIMITS.bytes) refuse(`${shown}: the outputs would pass ${OUTPUT_LIMITS.bytes} bytes, not saved`);
      else {
        bytes += size;
        accepted.push(shown);
      }
    }
  };
  walk("/sandbox/output", "", 0);
  if (left) refused.push(`… and ${left} more entries, not saved`);
  for (const shown of accepted) {
    const target = `${scratch}/output/${shown}`;
    fs.mkdirSync(target.slice(0, target.lastIndexOf("/")), { recursive: true });
    fs.writeFileSync(target, FS.readFile(`/sandbox/output/${shown}`));
  }
}

// The driver: lock the interpreter down, run the code as a script (the value of a last expression is
// reported like a notebook does), and write the outcome where the host can read it.
function DRIVER() {
  return `
def __sandbox_main():
    import ast, gc, json, os, sys, traceback, _imp
    blocked = ("js", "pyodide_js", "pyodide", "_pyodide", "_pyodide_core", "micropip", "pyodide_http")
    is_blocked = lambda name: str(name).split(".")[0] in blocked
    for name in list(sys.modules):
        if is_blocked(name):
            del sys.modules[name]

    class SandboxImportBlocker:
        def find_spec(self, name, path=None, target=None):
            if is_blocked(name):
                raise ImportError(f"{name} is not available in the sandbox")
            return None

    sys.meta_path[:] = [SandboxImportBlocker()] + [f for f in sys.meta_path if "Js" not in type(f).__name__]
    # Built-in modules can be made without the import system (_imp.create_builtin): same fence there.
    create_builtin = _imp.create_builtin
    def guarded_create_builtin(spec):
        if is_blocked(getattr(spec, "name", "")):
            raise ImportError(f"{spec.name} is not available in the sandbox")
        return create_builtin(spec)
    _imp.create_builtin = guarded_create_builtin
    os.environ.clear()
    os.environ.update({"HOME": "/sandbox", "LANG": "C.UTF-8"})
    os.chdir("/sandbox")
    gc.collect()

    with open("/sandbox/.main.py") as source:
        code = source.read()
    os.remove("/sandbox/.main.py")
    outcome = {"error": None, "value": None}
    # Room to report in: code that filled the memory limit leaves none for the traceback and the result.
    reserve = bytearray(1024 * 1024)
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    try:
        tree = ast.parse(code, filename="main.py")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, "main.py", "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "main.py", "eval"), namespace)
            if value is not None:
                outcome["value"] = repr(value)
    except BaseException as error:
        del reserve
        frames = error.__traceback__
        # Leave out this driver's own frame: the traceback starts in the user's code.
        while frames is not None and frames.tb_frame.f_code.co_filename != "main.py":
            frames = frames.tb_next
        outcome["error"] = "".join(traceback.format_exception(type(error), error, frames))
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    with open("/sandbox/.result.json", "w") as out:
        json.dump(outcome, out)

__sandbox_main()
del __sandbox_main
`;
}
