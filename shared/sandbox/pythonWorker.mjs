// The Python sandbox, one run per worker thread: Pyodide (CPython on WebAssembly) with the network,
// the host file system, the environment and the JS bridge closed before any user code runs.
// Plain JavaScript so that it loads the same way from the sources, the tests and the Lambda bundle.
import { parentPort, workerData } from "node:worker_threads";

const { memoryBytes } = workerData;

// Memory limit: WebAssembly memory lives outside the V8 heap (resourceLimits do not see it), so the
// cap is on its growth. Emscripten turns a refused grow into a failed malloc: Python's MemoryError.
const grow = WebAssembly.Memory.prototype.grow;
WebAssembly.Memory.prototype.grow = function (pages) {
  if (this.buffer.byteLength + pages * 65536 > memoryBytes) throw new RangeError("sandbox memory limit");
  return grow.call(this, pages);
};

const post = (message) => parentPort.postMessage(message);
const exit = process.exit.bind(process);

const { loadPyodide } = await import("pyodide");
const pyodide = await loadPyodide({
  env: { HOME: "/sandbox", LANG: "C.UTF-8" },
  stdout: (text) => post({ type: "stdout", text: `${text}\n` }),
  stderr: (text) => post({ type: "stderr", text: `${text}\n` }),
});
const { FS } = pyodide;
// No network: every socket Python opens fails (Emscripten would tunnel it over WebSockets).
pyodide._module.SOCKFS.createSocket = () => {
  throw new FS.ErrnoError(63); // EPERM
};
for (const name of ["fetch", "WebSocket", "XMLHttpRequest", "EventSource", "Request", "navigator", "require"]) {
  try {
    delete globalThis[name];
  } catch {}
}
for (const name of ["js", "pyodide_js"]) pyodide.unregisterJsModule(name);

post({ type: "ready" });

parentPort.once("message", (job) => {
  const started = performance.now();
  FS.mkdirTree("/sandbox/files");
  FS.mkdirTree("/sandbox/output");
  for (const file of job.files) FS.writeFile(`/sandbox/files/${file.name}`, Buffer.from(file.base64, "base64"), { mode: 0o444 });
  FS.chmod("/sandbox/files", 0o555);
  FS.writeFile("/sandbox/.main.py", job.code);
  try {
    pyodide.runPython(DRIVER);
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
  const outputs = [];
  for (const name of FS.readdir("/sandbox/output")) {
    if (name === "." || name === "..") continue;
    const path = `/sandbox/output/${name}`;
    if (!FS.isFile(FS.stat(path).mode)) continue;
    outputs.push({ name, base64: Buffer.from(FS.readFile(path)).toString("base64") });
  }
  post({ type: "result", error: result.error, value: result.value, outputs, ms: performance.now() - started });
  // Nothing the code scheduled gets a turn of the event loop: the thread ends now.
  exit(0);
});

// The driver: lock the interpreter down, run the code as a script (the value of a last expression is
// reported like a notebook does), and write the outcome where the host can read it.
const DRIVER = String.raw`
def __sandbox_main():
    import ast, gc, json, os, sys, traceback
    blocked = ("js", "pyodide_js", "pyodide", "_pyodide", "_pyodide_core", "micropip", "pyodide_http")
    for name in list(sys.modules):
        if name.split(".")[0] in blocked:
            del sys.modules[name]

    class SandboxImportBlocker:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in blocked:
                raise ImportError(f"{name} is not available in the sandbox")
            return None

    sys.meta_path[:] = [SandboxImportBlocker()] + [f for f in sys.meta_path if "Js" not in type(f).__name__]
    os.environ.clear()
    os.environ.update({"HOME": "/sandbox", "LANG": "C.UTF-8"})
    os.chdir("/sandbox")
    gc.collect()

    with open("/sandbox/.main.py") as source:
        code = source.read()
    os.remove("/sandbox/.main.py")
    outcome = {"error": None, "value": None}
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
