import { runPython, stopSpare } from "../shared/sandbox/runPython.js";
const r = await runPython({ code: "import importlib\nout = {}\nfor m in ['csv','json','statistics','math','datetime','re','collections','itertools','decimal','fractions','random','sqlite3','ssl','zoneinfo','xml.etree.ElementTree','html','textwrap','hashlib','zlib','gzip','zipfile','tarfile','lzma','bz2','difflib','string','unicodedata','numpy','pandas','matplotlib','tkinter','multiprocessing','threading','subprocess','ctypes']:\n    try:\n        importlib.import_module(m); out[m]='ok'\n    except Exception as e:\n        out[m]=type(e).__name__\nprint(out)" });
console.log(r.stdout, r.error);
await stopSpare();
