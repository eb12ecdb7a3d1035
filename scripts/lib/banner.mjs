// What `npm start` prints once everything runs: the addresses, the ops ports (from the registry), the
// local webhook rule, the demo credentials and a first request. README.md shows it with placeholder
// credentials; test/docs-drift.test.ts holds the two equal.
import { PROCESSES, processNames } from './processes.mjs';

/** The ops listeners, four to a line, by port. */
function opsLines() {
  const byOpsPort = processNames()
    .map((name) => ({ name, port: PROCESSES[name].ports.ops }))
    .sort((a, b) => a.port - b.port)
    .map(({ name, port }) => `${name} :${port}`);
  const lines = [];
  for (let i = 0; i < byOpsPort.length; i += 4) lines.push(byOpsPort.slice(i, i + 4).join('  '));
  return lines;
}

/**
 * The banner's text (without the rules around it). `env`: ENVIRONMENT, BASE_URL, AUTH_ISSUER,
 * WEBHOOK_ALLOW_LOOPBACK_TARGETS; `scope`; `demo`: the demo client and its ids.
 */
export function banner({ env, scope, demo }) {
  const loopback = env.WEBHOOK_ALLOW_LOOPBACK_TARGETS === 'true';
  return ` Partner Submission Service is running (environment ${env.ENVIRONMENT})

   API ({base_url})        ${env.BASE_URL}
   Token server ({auth_url}) ${env.AUTH_ISSUER}
   Access scope            ${scope}
   Ops (livez/readyz/metrics) ${opsLines().join(`\n${' '.repeat(30)}`)}
   Webhooks                ${loopback ? 'endpoints may point at this machine (WEBHOOK_ALLOW_LOOPBACK_TARGETS=true, local only)' : 'public https targets only'}

 Demo credentials (local only; also in .local/demo.json)
   client id       ${demo.clientId}
   client secret   ${demo.clientSecret}
   tenant/partner  ${demo.tenant} / ${demo.partnerId}
   principal       ${demo.principalId}
   product id      ${demo.productId}

 Try it:
   TOKEN=$(curl -s -u '${demo.clientId}:${demo.clientSecret}' \\
     -d grant_type=client_credentials -d scope=${scope} \\
     ${env.AUTH_ISSUER}/oauth2/token | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')
   curl -s -H "Authorization: Bearer $TOKEN" ${env.BASE_URL}/v1/health

 Ctrl-C stops everything.`;
}
