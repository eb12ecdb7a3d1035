// Quotes (/v1/submissions/{id}/quotes, /v1/quotes/{id}; in UAT /v1/test_helpers/quotes/{id}/decide):
// requested and decided by jobs, read from the policy service; quote.created and quote.updated.
import { ref } from '../../openapi/schemas.js';
import type { Resource } from '../resource.js';
import { quotePaths, quoteSchemas } from './openapi.js';
import { quoteRoutes } from './routes.js';

export const quotes: Resource = {
  name: 'quotes', routes: quoteRoutes,
  openapi: {
    tag: { name: 'Quotes', description: 'Prices for a submission\'s options, underwriting referrals, and the signed offers a partner can prove.' },
    paths: quotePaths, schemas: quoteSchemas,
    jobResults: [ref('QuotesCreated'), ref('Quote')],
    eventData: { 'quote.created': ref('Quote'), 'quote.updated': ref('Quote') },
  },
};
