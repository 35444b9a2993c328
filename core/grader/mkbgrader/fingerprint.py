"""The grader's fingerprint: SHA-256 over its own sources (every .py under mkbgrader/, so both the parent and the
child package, and mkb_cuda.py beside it), so a changed grader makes stored verdicts stale.
core/grader_client/grader_fingerprint.cpp hashes the same files the same way."""

from __future__ import annotations

import hashlib
import os


def grader_fingerprint() -> str:
    package = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(package)
    files = []
    for folder, dirs, names in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        files.extend(os.path.join(folder, n) for n in names if n.endswith(".py"))
    extra = os.path.join(root, "mkb_cuda.py")
    if os.path.isfile(extra):
        files.append(extra)
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(os.path.relpath(path, root).encode() + b"\0")
        with open(path, "rb") as handle:
            digest.update(handle.read())
        digest.update(b"\0")
    return digest.hexdigest()
