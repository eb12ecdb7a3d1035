-- What a submission's product required of it (API.md "Products and their requirements"): the
-- requirements version that judged its create job, the attachment rules of that version (its uploads
-- are judged by them), and the attachment types whose `min` is not met yet ("attachments.<type>"),
-- kept up to date by the transactions that promote and delete attachments. Submissions made before
-- this migration show version 0 and nothing due.
ALTER TABLE submissions
  ADD COLUMN requirements_version bigint NOT NULL DEFAULT 0,
  ADD COLUMN attachment_rules jsonb NOT NULL DEFAULT '[]',
  ADD COLUMN currently_due text[] NOT NULL DEFAULT '{}';

-- The types due when nothing is attached yet: every rule with a minimum.
CREATE FUNCTION initially_due(rules jsonb) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(array_agg('attachments.' || (r ->> 'documentType') ORDER BY o), '{}')
    FROM jsonb_array_elements(rules) WITH ORDINALITY AS t(r, o)
   WHERE coalesce((r ->> 'min')::int, 0) > 0
$$;
