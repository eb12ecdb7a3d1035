// `helm test`: gets an access token from the token server with the test client's credentials
// (client_credentials, HTTP Basic, the environment's scope) and calls GET /v1/health on the gateway,
// both through their in-cluster Services. Exits 0 only on a 200 {"status":"ok"}. Never prints secrets.
const { TOKEN_URL, HEALTH_URL, SCOPE, CLIENT_ID, CLIENT_SECRET } = process.env;
const ATTEMPTS = 10;

// RFC 6749 §2.3.1: id and secret are form-urlencoded before they are joined for Basic.
const formEncode = (s) => new URLSearchParams([['', s]]).toString().slice(1);
const basic = Buffer.from(`${formEncode(CLIENT_ID ?? '')}:${formEncode(CLIENT_SECRET ?? '')}`).toString('base64');

async function attempt() {
  const tokenRes = await fetch(TOKEN_URL, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: SCOPE }).toString(),
  });
  if (tokenRes.status !== 200) {
    // An OAuth error body ({error, error_description}) holds no secret.
    return { ok: false, retry: tokenRes.status >= 500, message: `token endpoint answered ${tokenRes.status}: ${await tokenRes.text()}` };
  }
  const { access_token: token } = await tokenRes.json();
  const healthRes = await fetch(HEALTH_URL, { headers: { authorization: `Bearer ${token}` } });
  const body = await healthRes.text();
  let status;
  try {
    status = JSON.parse(body).status;
  } catch {
    status = undefined;
  }
  const ok = healthRes.status === 200 && status === 'ok';
  return { ok, retry: healthRes.status >= 500, message: `GET /v1/health answered ${healthRes.status}: ${body}` };
}

for (let i = 1; i <= ATTEMPTS; i++) {
  let result;
  try {
    result = await attempt();
  } catch (err) {
    result = { ok: false, retry: true, message: `request failed: ${err.cause?.code ?? err.message}` };
  }
  console.log(`attempt ${i}: ${result.message}`);
  if (result.ok) process.exit(0);
  if (!result.retry || i === ATTEMPTS) process.exit(1);
  await new Promise((resolve) => setTimeout(resolve, 3000));
}
