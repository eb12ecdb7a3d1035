// Types of product.mjs for the TypeScript that uses it (the tests).
export declare const DEMO_PRODUCT: { id: string; name: string };
export declare const DEMO_REQUIREMENTS: {
  attachments: { documentType: string; min: number; max: number; mediaTypes: string[]; maxBytes: number }[];
};
export declare function requiresNothing(requirements: {
  applicant?: { required?: string[] };
  effectiveDate?: unknown;
  attachments?: unknown[];
}): boolean;
