import { parseUpload } from "../functions/api/upload.js";
const form = new FormData();
form.append("file", new Blob(["a,b\n1,2\n"], { type: "text/csv" }), "../../etc/pa\u0007sswd.csv");
const req = new Request("http://x/", { method: "POST", body: form });
const buf = Buffer.from(await req.arrayBuffer());
console.log(JSON.stringify(buf.toString().slice(0, 200)));
try { console.log(await parseUpload({ body: buf.toString("base64"), isBase64Encoded: true, headers: { "content-type": req.headers.get("content-type")! } } as any, 1000)); } catch (e) { console.log(e) }
