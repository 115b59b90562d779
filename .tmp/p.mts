import { runPython } from "../shared/sandbox/runPython.ts";
const t = performance.now();
const r = await runPython({ code: "chunk = b'x' * (16 * 1024 * 1024)\nwith open('/tmp/big.bin', 'wb') as out:\n    for i in range(40):\n        out.write(chunk)\n        print(i, flush=True)", memoryMb: 256, timeoutMs: 120000 });
console.log(r.error, r.stdout.slice(-30), performance.now() - t);
