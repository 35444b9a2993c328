#!/usr/bin/env python3
"""A scripted OpenAI-compatible chat-completions server on loopback, for the chat driver's tests.

Usage: fake_openai_server.py --script SCRIPT.json [--log REQUESTS.jsonl]

Prints "PORT <n>" on stdout once listening on 127.0.0.1 (a free port). Each POST to /chat/completions takes the
next step of the script's "replies" list; after the last one, the last step repeats when "repeat_last" is true,
otherwise the server answers 500 "script exhausted". A step is an object:
  content        the assistant message content (a reply of HTTP 200)
  usage          the usage object to send (default: none)
  finish_reason  default "stop"
  status         an HTTP status other than 200, with body (default a JSON error object)
  headers        extra response headers, e.g. {"Retry-After": "1"}
  delay_s        seconds to sleep before answering (to provoke client timeouts)
  raw_body_hex   the exact response body bytes, hex-encoded (for invalid UTF-8)
  echo_auth      put the request's Authorization header into the error body (to tempt leaks)
  drop           close the connection without answering
Each request is appended to the log as one JSON line: the step index, the path, the parsed body and whether an
Authorization header came (never its value).
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Script:
    def __init__(self, path: str, log_path: str | None) -> None:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        self.replies: list[dict[str, Any]] = data.get("replies", [])
        self.repeat_last: bool = bool(data.get("repeat_last", False))
        self.log_path = log_path
        self.next_index = 0
        self.lock = threading.Lock()

    def take(self) -> tuple[int, dict[str, Any] | None]:
        with self.lock:
            index = self.next_index
            self.next_index += 1
        if index < len(self.replies):
            return index, self.replies[index]
        if self.repeat_last and self.replies:
            return index, self.replies[-1]
        return index, None

    def log(self, entry: dict[str, Any]) -> None:
        if not self.log_path:
            return
        with self.lock, open(self.log_path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")


def make_handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # keep stderr quiet
            pass

        def send_bytes(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                request = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                request = None
            auth = self.headers.get("Authorization")
            index, step = script.take()
            script.log({"index": index, "path": self.path, "body": request, "has_authorization": auth is not None,
                        "extra": {k: v for k, v in self.headers.items() if k.lower().startswith("x-")}})
            if step is None:
                self.send_bytes(500, b'{"error": {"message": "script exhausted"}}', {})
                return
            if step.get("delay_s"):
                time.sleep(float(step["delay_s"]))
            if step.get("drop"):
                self.close_connection = True
                try:
                    self.connection.shutdown(2)
                except OSError:
                    pass
                return
            headers = dict(step.get("headers", {}))
            if "raw_body_hex" in step:
                self.send_bytes(int(step.get("status", 200)), bytes.fromhex(step["raw_body_hex"]), headers)
                return
            if "status" in step and int(step["status"]) != 200:
                message = step.get("body", "scripted failure")
                if step.get("echo_auth"):
                    message = f"{message}; you sent Authorization: {auth}"
                body = json.dumps({"error": {"message": message}}).encode("utf-8")
                self.send_bytes(int(step["status"]), body, headers)
                return
            reply: dict[str, Any] = {
                "id": f"chatcmpl-{index}",
                "object": "chat.completion",
                "model": (request or {}).get("model", "fake"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": step.get("content", "")},
                             "finish_reason": step.get("finish_reason", "stop")}],
            }
            if "usage" in step:
                reply["usage"] = step["usage"]
            self.send_bytes(200, json.dumps(reply).encode("utf-8"), headers)

    return Handler


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks up the host's FQDN, which can hang where there is no DNS.
        import socketserver
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", required=True)
    parser.add_argument("--log")
    args = parser.parse_args()
    script = Script(args.script, args.log)
    server = LoopbackServer(("127.0.0.1", 0), make_handler(script))
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
