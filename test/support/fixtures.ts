// Shared test data: a product every test stack provisions, and a valid submission body.
import { randomUUID } from 'node:crypto';
import type { Stack } from './stack.js';

export const PRODUCT = '11111111-2222-4333-8444-555555555555';

export const submissionBody = (externalRef = `ref-${randomUUID()}`, legalName = 'Acme Holdings LLC') => ({
  externalRef,
  submissionType: 'application',
  effectiveDate: '2027-01-01',
  productId: PRODUCT,
  applicant: { legalName },
});

/** Adds the product and a client with every permission; returns the client's token. */
export async function provision(stack: Stack): Promise<string> {
  await stack.admin('product', 'add', '--id', PRODUCT, '--name', 'Test product');
  return stack.token(await stack.createClient());
}

/**
 * Folders test/eslint-config.test.ts plants in a package's src/ while it runs (lint needs them inside
 * a package): the tests that walk the sources skip them, as they may vanish mid-walk.
 */
export const isPlantedFixture = (dirName: string): boolean => dirName.startsWith('lint-fixture-');
