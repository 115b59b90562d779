# The interpreter of one local code interpreter session: CPython with the data libraries, started by
# pythonSession.ts inside bubblewrap (no network, a read-only system, a private scratch folder as the
# working directory, a user of its own, memory and process limits). It keeps one namespace for the
# whole session, so variables, imports and files survive from one call to the next.
#
# Protocol: one JSON request per line on stdin; one JSON reply per line on fd 3. The code runs in
# this very process, so it can forge replies: the host trusts nothing it reads here and bounds it.
import ast
import base64
import io
import json
import os
import stat
import sys
import time
import traceback

requests = sys.stdin.buffer
replies = os.fdopen(3, "w", encoding="utf-8")
sys.stdin = io.StringIO("")
namespace = {"__name__": "__main__", "__builtins__": __builtins__}
# Entries one listing returns at most: a folder of 10,000 files is answered with the first ones.
MAX_LISTED = 1000


class Capture(io.TextIOBase):
    """A stream that keeps its first `limit` characters and counts the rest."""

    def __init__(self, limit):
        self.parts, self.size, self.limit, self.more = [], 0, limit, False

    def writable(self):
        return True

    def write(self, text):
        room = self.limit - self.size
        if room > 0:
            self.parts.append(text[:room])
            self.size += min(room, len(text))
        if len(text) > room:
            self.more = True
        return len(text)

    def text(self):
        kept = "".join(self.parts)
        return kept + (f"\n[cut at {self.limit} characters]" if self.more else "")


def inside(path):
    """A relative path under the working directory, or an error."""
    full = os.path.normpath(os.path.join("/sandbox", path))
    if not (full == "/sandbox" or full.startswith("/sandbox/")) or path.startswith("/"):
        raise ValueError(f"{path}: not a relative path in the session's folder")
    return full


def execute(request):
    stdout, stderr = Capture(request["maxChars"]), Capture(request["maxChars"])
    sys.stdout, sys.stderr = stdout, stderr
    began = time.monotonic()
    failed = False
    # Room to report in: code that filled the memory limit leaves none for the traceback.
    reserve = bytearray(1024 * 1024)
    try:
        tree = ast.parse(request["code"], filename="main.py")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, "main.py", "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "main.py", "eval"), namespace)
            if value is not None:
                # Shown as a notebook shows it, after what the code printed.
                print(repr(value), file=stdout)
    except BaseException as error:
        del reserve
        failed = True
        frames = error.__traceback__
        while frames is not None and frames.tb_frame.f_code.co_filename != "main.py":
            frames = frames.tb_next
        stderr.write("".join(traceback.format_exception(type(error), error, frames)))
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    return {"stdout": stdout.text(), "stderr": stderr.text(), "failed": failed, "ms": (time.monotonic() - began) * 1000}


def write(request):
    written = []
    for file in request["files"]:
        full = inside(file["path"])
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as out:
            out.write(base64.b64decode(file["base64"]))
        if file.get("readOnly"):
            os.chmod(full, 0o444)
        written.append(file["path"])
    return {"written": written}


def kind_of(mode):
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "directory"
    return "file" if stat.S_ISREG(mode) else "other"


def list_files(request):
    folder = inside(request["path"])
    entries, more = [], False
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if len(entries) >= MAX_LISTED:
            more = True
            break
        info = os.lstat(os.path.join(folder, name))
        entries.append({"name": name, "size": info.st_size, "kind": kind_of(info.st_mode), "links": info.st_nlink})
    return {"entries": entries, "more": more}


def read(request):
    files, budget = [], request["maxBytes"]
    for path in request["paths"]:
        fd = os.open(inside(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
                raise ValueError(f"{path}: not a regular file")
            if info.st_size > budget:
                raise ValueError(f"{path}: {info.st_size} bytes, more than the {budget} left to read")
            body = os.read(fd, info.st_size)
            budget -= len(body)
            files.append({"path": path, "base64": base64.b64encode(body).decode()})
        finally:
            os.close(fd)
    return {"files": files}


def remove(request):
    import shutil

    for path in request["paths"]:
        full = inside(path)
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full, ignore_errors=True)
        elif os.path.lexists(full):
            os.unlink(full)
    return {"removed": request["paths"]}


OPERATIONS = {"execute": execute, "write": write, "list": list_files, "read": read, "remove": remove}

for folder in ("files", "output"):
    os.makedirs(f"/sandbox/{folder}", exist_ok=True)
replies.write(json.dumps({"ready": True}) + "\n")
replies.flush()
for line in requests:
    try:
        request = json.loads(line)
        reply = OPERATIONS[request["op"]](request)
    except Exception as error:
        reply = {"error": f"{type(error).__name__}: {error}"}
    replies.write(json.dumps(reply) + "\n")
    replies.flush()
