import { loadPyodide } from "pyodide";
const LIMIT = 256 * 1024 * 1024;
const grow = WebAssembly.Memory.prototype.grow;
WebAssembly.Memory.prototype.grow = function (pages) {
  if (this.buffer.byteLength + pages * 65536 > LIMIT) throw new RangeError("memory limit");
  return grow.call(this, pages);
};
const py = await loadPyodide({ env: {}, stdout: (s) => console.log("OUT", s), stderr: (s)=>console.log("ERR", s) });
console.log("heap", py._module.HEAPU8.length);
py.unregisterJsModule?.("js"); py.unregisterJsModule?.("pyodide_js");
py.runPython(`
import sys, gc
for name in list(sys.modules):
    if name in ("js", "pyodide_js") or name.startswith(("pyodide", "_pyodide")):
        del sys.modules[name]
sys.meta_path[:] = [f for f in sys.meta_path if "Js" not in type(f).__name__]
gc.collect()
`);
const run = (code) => { try { console.log("OK", String(py.runPython(code))) } catch (e) { console.log("E", e.message.split("\n").slice(-2).join(" | ")) } };
run("str(sys.meta_path)");
run("import js");
run("import pyodide");
run("import _pyodide_core; str(dir(_pyodide_core))");
run("import gc; str([type(o).__name__ for o in gc.get_objects() if 'Js' in type(o).__name__][:20])");
run("import gc; len([o for o in gc.get_objects() if 'Js' in type(o).__name__])");
run("import socket; s=socket.socket(); s.connect(('example.com',80))");
run("import urllib.request; urllib.request.urlopen('http://127.0.0.1:1/').read()");
run("x = bytearray(600*1024*1024); len(x)");
run("y = [0]*(10**8); len(y)");
run("1+1");
