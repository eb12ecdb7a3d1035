-- Products' requirements (API.md "Products and their requirements"): the normalized document
-- (services/shared/src/domain/requirements.ts) and its version, bumped by every change
-- (`npm run -s admin -- product requirements set --id P FILE.json`). A product that never had
-- requirements is at version 1 and accepts what the generic schema accepts.
ALTER TABLE products
  ADD COLUMN requirements jsonb NOT NULL DEFAULT '{"applicant": {"required": []}, "effectiveDate": null, "attachments": []}',
  ADD COLUMN requirements_version bigint NOT NULL DEFAULT 1;

-- Timestamps as the API shows them (whole milliseconds), so a list cursor names a row exactly.
UPDATE products SET created_at = date_trunc('milliseconds', created_at), updated_at = date_trunc('milliseconds', updated_at);
ALTER TABLE products ALTER COLUMN created_at SET DEFAULT date_trunc('milliseconds', now()),
                     ALTER COLUMN updated_at SET DEFAULT date_trunc('milliseconds', now());

-- GET /v1/products: newest first, keyset pagination.
CREATE INDEX products_list ON products (created_at DESC, product_id DESC);

-- Events (product.requirements_changed, to every partner) recorded in the transaction of the change,
-- until the policy service's relay has published them to the events stream (Nats-Msg-Id = event_id).
-- Same table in every schema that records events (see services/shared/src/domain/events.ts).
CREATE TABLE event_outbox (
  id bigserial PRIMARY KEY,
  event_id text NOT NULL,
  subject text NOT NULL,
  body jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX event_outbox_created_at ON event_outbox (created_at);
