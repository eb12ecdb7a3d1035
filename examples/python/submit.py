#!/usr/bin/env python3
"""The recommended client pattern in Python, standard library only (3.9+).

Gets a token (HTTP Basic, cached until shortly before it expires), creates a submission with a fresh
Idempotency-Key and `Prefer: wait=15`, polls the job on 202 honouring Retry-After, and resends the
same request with the same key after a dropped connection (the server answers with the same job).

    PARTNER_BASE_URL=... PARTNER_AUTH_URL=... PARTNER_CLIENT_ID=... PARTNER_CLIENT_SECRET=... \
    PARTNER_SCOPE=api.uat.example.com/access python3 submit.py <productId> [externalRef]

Prints the submission result as JSON; exits 1 with the error envelope when the job failed.
"""
import base64
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid


class Client:
    def __init__(self, base_url, auth_url, client_id, client_secret, scope):
        self.base_url = base_url.rstrip("/")
        if self.base_url.endswith("/v1"):
            self.base_url = self.base_url[:-3]
        self.token_url = auth_url.rstrip("/") + "/oauth2/token"
        self.basic = base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
        self.scope = scope
        self._token = None
        self._expires_at = 0.0

    def token(self):
        if self._token and time.time() < self._expires_at - 60:
            return self._token
        body = urllib.parse.urlencode({"grant_type": "client_credentials", "scope": self.scope}).encode()
        req = urllib.request.Request(self.token_url, data=body, method="POST", headers={
            "Authorization": f"Basic {self.basic}",
            "Content-Type": "application/x-www-form-urlencoded",
        })
        with urllib.request.urlopen(req, timeout=30) as res:
            answer = json.load(res)
        self._token = answer["access_token"]
        self._expires_at = time.time() + int(answer.get("expires_in", 300))
        return self._token

    def request(self, method, path, body=None, headers=None, hold_s=0, attempts=4):
        """One request; resent (same headers, so the same Idempotency-Key) when no answer came."""
        data = json.dumps(body).encode() if body is not None else None
        for attempt in range(1, attempts + 1):
            h = {"Authorization": f"Bearer {self.token()}", "Accept": "application/json", **(headers or {})}
            if data is not None:
                h["Content-Type"] = "application/json"
            req = urllib.request.Request(self.base_url + path, data=data, method=method, headers=h)
            try:
                with urllib.request.urlopen(req, timeout=30 + hold_s) as res:
                    return res.status, dict(res.headers), json.load(res)
            except urllib.error.HTTPError as err:
                envelope = json.load(err) if err.headers.get("Content-Type", "").startswith("application/json") else {}
                retryable = envelope.get("error", {}).get("retryable", False)
                if retryable and "jobId" not in envelope and attempt < attempts:
                    time.sleep(max(int(err.headers.get("Retry-After", "1")), 2 ** (attempt - 1)))
                    continue
                return err.code, dict(err.headers), envelope
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if attempt == attempts:
                    raise
                time.sleep(2 ** (attempt - 1))
        raise RuntimeError("unreachable")

    def create_submission(self, submission, wait_s=15):
        key = str(uuid.uuid4())  # one fresh key per submission, reused by every resend of it
        status, headers, body = self.request("POST", "/v1/submissions", submission,
                                             {"Idempotency-Key": key, "Prefer": f"wait={wait_s}"}, hold_s=wait_s)
        if status == 202:
            job_id = body["id"]
            retry_after = int(headers.get("Retry-After", "5"))
            while True:
                time.sleep(retry_after)
                status, headers, job = self.request("GET", f"/v1/jobs/{job_id}")
                if job.get("status") == "succeeded":
                    return job["result"]
                if job.get("status") in ("failed", "canceled"):  # canceled: cancelled before it started
                    raise ApiError(job["error"], job_id)
                retry_after = int(headers.get("Retry-After", "5"))
        if status == 200:
            return body
        raise ApiError(body.get("error", {"code": f"http_{status}", "message": "", "retryable": status >= 500}), body.get("jobId"))


class ApiError(Exception):
    def __init__(self, error, job_id=None):
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.error = error
        self.job_id = job_id


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    env = os.environ
    client = Client(env["PARTNER_BASE_URL"], env["PARTNER_AUTH_URL"], env["PARTNER_CLIENT_ID"],
                    env["PARTNER_CLIENT_SECRET"], env["PARTNER_SCOPE"])
    submission = {
        "externalRef": sys.argv[2] if len(sys.argv) > 2 else "python-example",
        "submissionType": "application",
        "effectiveDate": "2027-01-01",
        "productId": sys.argv[1],
        "applicant": {"legalName": "Acme Holdings LLC"},
    }
    try:
        print(json.dumps(client.create_submission(submission)))
        return 0
    except ApiError as err:
        print(json.dumps({"error": err.error, "jobId": err.job_id}))
        return 1


if __name__ == "__main__":
    sys.exit(main())
