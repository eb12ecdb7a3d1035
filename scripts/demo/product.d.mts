// Types of product.mjs for the TypeScript that uses it (the tests).
export declare const DEMO_PRODUCT: { id: string; name: string };
export declare const DEMO_REQUIREMENTS: {
  attachments: { documentType: string; min: number; max: number; mediaTypes: string[]; maxBytes: number }[];
};
export declare const DEMO_RISK: Record<string, unknown>;
export declare const DEMO_RATING_PLAN: Record<string, unknown> & { decline: unknown[] };
export declare function addQuotableProduct(admin: (...args: string[]) => Promise<unknown>, name: string, id?: string): Promise<string>;
export declare function requiresNothing(requirements: {
  applicant?: { required?: string[] };
  effectiveDate?: unknown;
  attachments?: unknown[];
}): boolean;
