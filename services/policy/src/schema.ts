// The policy service's schema, its migrations and the names of its list cursors: all that the admin
// commands, the migrations and the other entry points need of the service, without loading the
// service itself (app.ts).
import { fileURLToPath } from 'node:url';

export const SCHEMA = 'policy';
export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));

/** Names the policy list in its cursors (a cursor of another list never passes). */
export const CURSOR_CONTEXT = 'partner.policy.v1/list-cursor';
/** Names the product list in its cursors. */
export const PRODUCT_CURSOR_CONTEXT = 'partner.policy.v1/product-list-cursor';
/** Names the test clock list in its cursors. */
export const CLOCK_CURSOR_CONTEXT = 'partner.policy.v1/test-clock-list-cursor';
/** Names the quote list in its cursors. */
export const QUOTE_CURSOR_CONTEXT = 'partner.policy.v1/quote-list-cursor';
