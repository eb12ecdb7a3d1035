-- Risk data (API.md "Risk data"): the create body's optional `risk` object, product-defined fields
-- judged by the product's risk schema before the submission is created; shown as `risk` in the
-- submission record (null when the body had none). Not the clearance's risk key (risk_name, risk_tax_id, …).
ALTER TABLE submissions ADD COLUMN risk_data jsonb;
