#!/usr/bin/env python3
"""Verifying a webhook delivery in Python, standard library only (3.9+).

Deliveries follow Standard Webhooks (https://www.standardwebhooks.com): the headers `webhook-id`,
`webhook-timestamp` (unix seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256>`, several
separated by spaces while a secret is being rotated). The signed content is
"{webhook-id}.{webhook-timestamp}.{raw body}", keyed with the base64-decoded part of the endpoint's
`whsec_…` secret. The `standardwebhooks` package on PyPI does the same; this file shows every step.

Use `verify()` in your own receiver: pass the raw body bytes exactly as received (not re-serialised
JSON). Then dedupe on `webhook-id` (deliveries are at least once) and answer 2xx quickly.

    WEBHOOK_SECRET=whsec_... python3 verify_webhook.py serve [port]   # a receiver: prints each event
    WEBHOOK_SECRET=whsec_... python3 verify_webhook.py check HEADERS_JSON < body   # verify one

`serve` answers 204 to a verified delivery (a repeated `webhook-id` too, without handling it again)
and 400 to anything else.
"""
import base64
import hashlib
import hmac
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOLERANCE_SECONDS = 5 * 60


class WebhookVerificationError(Exception):
    pass


def _secret_bytes(secret):
    if secret.startswith("whsec_"):
        secret = secret[len("whsec_"):]
    try:
        return base64.b64decode(secret, validate=True)
    except ValueError as err:
        raise WebhookVerificationError("the secret is not whsec_ followed by base64") from err


def verify(payload, headers, secret, now=None, tolerance=TOLERANCE_SECONDS):
    """Returns the event (parsed JSON) when the delivery is authentic, else raises WebhookVerificationError.

    payload: the raw body (bytes); headers: a mapping (header names in any case); secret: "whsec_...".
    """
    lower = {k.lower(): v for k, v in headers.items()}
    msg_id = lower.get("webhook-id")
    timestamp = lower.get("webhook-timestamp")
    signatures = lower.get("webhook-signature")
    if not msg_id or not timestamp or not signatures:
        raise WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature")
    try:
        sent_at = int(timestamp)
    except ValueError as err:
        raise WebhookVerificationError("webhook-timestamp is not unix seconds") from err
    now = int(time.time()) if now is None else now
    # Both directions: an old message may be a replay, one from the future a clock problem.
    if abs(now - sent_at) > tolerance:
        raise WebhookVerificationError("webhook-timestamp is outside the tolerance")

    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + payload
    expected = base64.b64encode(hmac.new(_secret_bytes(secret), signed, hashlib.sha256).digest())
    for candidate in signatures.split(" "):
        version, _, signature = candidate.partition(",")
        # Only v1 (HMAC-SHA256) is defined; other versions are skipped, not errors.
        if version == "v1" and hmac.compare_digest(signature.encode(), expected):
            return json.loads(payload)
    raise WebhookVerificationError("no signature matches")


def serve(port, secret):
    seen = set()  # in production: a table with a unique key on webhook-id

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                event = verify(body, dict(self.headers.items()), secret)
            except WebhookVerificationError as err:
                self.send_response(400)
                self.end_headers()
                print(json.dumps({"refused": str(err)}), flush=True)
                return
            msg_id = self.headers["webhook-id"]
            # Answer first and fast; a real receiver queues the event for its own work.
            self.send_response(204)
            self.end_headers()
            if msg_id in seen:
                print(json.dumps({"duplicate": msg_id}), flush=True)
                return
            seen.add(msg_id)
            print(json.dumps({"received": msg_id, "type": event.get("type"), "event": event}), flush=True)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Receiver)
    print(json.dumps({"listening": server.server_address[1]}), flush=True)
    server.serve_forever()


def main(argv):
    secret = os.environ.get("WEBHOOK_SECRET")
    if not secret or len(argv) < 2 or argv[1] not in ("serve", "check"):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[1] == "serve":
        serve(int(argv[2]) if len(argv) > 2 else 3000, secret)
        return 0
    try:
        event = verify(sys.stdin.buffer.read(), json.loads(argv[2]), secret)
    except WebhookVerificationError as err:
        print(json.dumps({"verified": False, "error": str(err)}))
        return 1
    print(json.dumps({"verified": True, "event": event}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
