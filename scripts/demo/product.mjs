#!/usr/bin/env node
// The demo product `npm start` seeds, and what it requires, so the README's walkthrough shows the
// lifecycle by itself (issue 49, 1): a create leaves `attachments.loss_run` in `currentlyDue`, the
// upload of a loss run (a PDF, at most 10 MiB, at most 5 of them) empties it. The same rule the
// OpenAPI document's and the Postman collection's examples show. test/docs.test.ts seeds its stack
// from here too.
//
// Quotes and bind (issues 42 and 43) are not there yet: the demo product's rating plan goes here
// beside its requirements once they land, and the walkthrough's "Quote and bind" note becomes its steps.
//
//   node scripts/demo/product.mjs      prints the requirements file for `npm run admin -- product requirements set`
import { pathToFileURL } from 'node:url';

export const DEMO_PRODUCT = { id: '6f1c2b4e-8a3d-4f5e-9b7a-1c2d3e4f5a6b', name: 'Demo General Liability' };

/** The demo product's requirements file (the admin CLI's format, services/shared/src/domain/requirements.ts). */
export const DEMO_REQUIREMENTS = {
  attachments: [{ documentType: 'loss_run', min: 1, max: 5, mediaTypes: ['application/pdf'], maxBytes: 10 * 1024 * 1024 }],
};

/**
 * True when a product's requirements, as `GET /v1/products/{id}/requirements` shows them, ask for
 * nothing: a product just added, or the demo product of a database seeded before it had requirements.
 * `npm start` sets the demo's then, and leaves any other alone (an operator's change stands, and a
 * second start bumps no version).
 */
export function requiresNothing(requirements) {
  return (
    (requirements.applicant?.required ?? []).length === 0 &&
    (requirements.effectiveDate ?? null) === null &&
    (requirements.attachments ?? []).length === 0
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(`${JSON.stringify(DEMO_REQUIREMENTS, null, 2)}\n`);
}
