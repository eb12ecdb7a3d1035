// The submission service's receipt settings (docs/configuration.md is generated from these).
import type { EnvReader } from '@partner/shared/config/env';
import { parseKekList } from '@partner/shared/crypto/sealed-keys';
import { defaultUrl } from '@partner/shared/process/registry';

export interface ReceiptSettings {
  /** Issue receipts (true unless the bench measures their cost). */
  enabled: boolean;
  /** The receipts' iss: the API's public base URL. */
  issuer: string;
  /** The key-encryption keys, newest first: the newest seals, all unseal. */
  keks: Buffer[];
}

export function readReceiptSettings(env: EnvReader): ReceiptSettings {
  // One key-encryption key per deployment: the auth service's token keys and these receipt keys are
  // sealed under the same list (same Secret in the chart), rotated the same way.
  const kekList = env.str('AUTH_KEY_ENCRYPTION_KEY', {
    doc: "the same list as auth's (one key-encryption key per deployment, one Secret): seals the receipt keys at rest; the newest seals, older ones only unseal",
    range: 'base64 keys of 32 bytes',
  });
  const keks = parseKekList(kekList, (message) => env.problem('AUTH_KEY_ENCRYPTION_KEY', message));
  return {
    enabled: env.bool('RECEIPTS_ISSUE', {
      default: true,
      doc: "issue a signed receipt with every created submission and attachment; false is for the bench only (measures the receipts' cost; records created meanwhile get no receipt)",
    }),
    issuer: env.url('BASE_URL', { default: defaultUrl('gateway'), protocols: ['http:', 'https:'], doc: "public {base_url}: the receipts' iss" }).replace(/\/$/, ''),
    keks,
  };
}
