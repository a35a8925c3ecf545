#!/usr/bin/env python3
"""The web service GranaryConnect's tests talk to: standard library only, on 127.0.0.1.

Started by the tests (TestWebServer.swift) on a free port, which it prints as its first line.

  GET  /customers                 the feed: a JSON array of customer objects (see /admin/seed)
  POST /outbox                    an outbox entry (JSON); applied once per Idempotency-Key header
  GET  /admin/received            {"applied": [keys in order], "duplicates": n, "entries": [...]}
  POST /admin/seed                replaces the feed with the posted JSON array, or {"count": n, "prefix": p}
  POST /admin/mode                {"fail": status or null, "delay": seconds, "die_after_bytes": n or null,
                                   "fail_outbox": status or null, "fail_outbox_times": n}
  POST /admin/stop                stops the server

The applied outbox keys are also appended to the file named by --journal, one per line, so that a test
can count what reached the server across the server's restarts.
"""
import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
state = {"feed": [], "applied": [], "seen": set(), "duplicates": 0, "entries": [],
         "fail": None, "delay": 0.0, "die_after_bytes": None, "fail_outbox": None, "fail_outbox_times": 0}
journal_path = None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"null")

    def do_GET(self):
        with lock:
            delay, fail, die = state["delay"], state["fail"], state["die_after_bytes"]
        if self.path.startswith("/admin/received"):
            with lock:
                self.answer(200, {"applied": state["applied"], "duplicates": state["duplicates"], "entries": state["entries"]})
            return
        if delay:
            time.sleep(delay)
        if fail:
            self.answer(fail, {"error": "failing on demand"})
            return
        if self.path.startswith("/customers"):
            with lock:
                data = json.dumps(state["feed"]).encode()
            if die is not None:
                # Announce the whole body, send part of it, and stop the process: the client sees the
                # server die in the middle of its answer.
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[:die])
                self.wfile.flush()
                os._exit(0)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.answer(404, {"error": "no such path " + self.path})

    def do_POST(self):
        if self.path == "/admin/seed":
            body = self.body()
            if isinstance(body, dict):
                prefix = body.get("prefix", "c")
                feed = [{"uuid": "%s%06d" % (prefix, i), "name": "name %d" % i, "score": i} for i in range(body["count"])]
            else:
                feed = body
            with lock:
                state["feed"] = feed
            self.answer(200, {"count": len(feed)})
            return
        if self.path == "/admin/mode":
            body = self.body()
            with lock:
                for key in ("fail", "delay", "die_after_bytes", "fail_outbox", "fail_outbox_times"):
                    if key in body:
                        state[key] = body[key]
            self.answer(200, {"ok": True})
            return
        if self.path == "/admin/stop":
            self.answer(200, {"ok": True})
            threading.Thread(target=self.server.shutdown).start()
            return
        if self.path == "/outbox":
            entry = self.body()
            key = self.headers.get("Idempotency-Key") or entry.get("idempotencyKey")
            with lock:
                if state["delay"]:
                    time.sleep(state["delay"])
                if state["fail_outbox"] and state["fail_outbox_times"] != 0:
                    state["fail_outbox_times"] -= 1
                    status = state["fail_outbox"]
                    self.answer(status, {"error": "outbox failing on demand"})
                    return
                if key in state["seen"]:
                    state["duplicates"] += 1
                else:
                    state["seen"].add(key)
                    state["applied"].append(key)
                    state["entries"].append(entry)
                    if journal_path:
                        with open(journal_path, "a") as journal:
                            journal.write(key + "\n")
            self.answer(200, {"applied": key})
            return
        self.answer(404, {"error": "no such path " + self.path})


def main():
    global journal_path
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--journal")
    args = parser.parse_args()
    journal_path = args.journal
    if journal_path and os.path.exists(journal_path):
        with open(journal_path) as journal:
            for line in journal:
                key = line.strip()
                if key:
                    state["seen"].add(key)
                    state["applied"].append(key)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
