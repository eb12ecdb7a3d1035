// Types of banner.mjs for the TypeScript that uses it (test/docs-drift.test.ts).
export declare function banner(a: {
  env: { ENVIRONMENT: string; BASE_URL: string; AUTH_ISSUER: string; WEBHOOK_ALLOW_LOOPBACK_TARGETS?: string };
  scope: string;
  demo: { clientId: string; clientSecret: string; tenant: string; partnerId: string; principalId: string; productId: string };
}): string;
