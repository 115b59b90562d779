import { loadPyodide } from "pyodide";
const t0 = Date.now();
const py = await loadPyodide({ env: {}, stdout: (s) => console.log("OUT", s), stderr: (s)=>console.log("ERR", s) });
console.log("loaded", Date.now() - t0, py.version);
const t1 = Date.now();
console.log(py.runPython("import csv, json, statistics, math, datetime, re, sys; sum(range(10))"), Date.now()-t1);
console.log(py.runPython("import os; str(dict(os.environ))"));
try { py.runPython("open('/etc/passwd').read()") } catch (e) { console.log("E", e.message.slice(-200)) }
console.log(py.runPython("import os; str(os.listdir('/'))"));
