-- Attachments of submissions. The record lives in `attachments`; the bytes live in a blob store
-- under the attachment's id (by default PostgreSQL: `attachment_chunks` below).
--
-- Life of a row (state):
--   receiving  the upload is streaming in; bytes are being written
--   staged     every byte is stored (size and sha256 known); waiting for its attachment.create job
--   active     promoted by its job: an attachment the API shows
--   deleted    removed by an attachment.delete job; kept (without bytes) so a redelivered job
--              finds it, and dropped by the sweep later
--   purging    claimed by the sweep (an abandoned upload), bytes being removed
-- A failed or cancelled upload removes its row and bytes at once; the sweep removes what a crash
-- left behind and staged uploads no job promoted in time.
CREATE TABLE attachments (
  attachment_id   uuid PRIMARY KEY,
  submission_id   uuid NOT NULL REFERENCES submissions (submission_id),
  tenant_id       text NOT NULL,
  partner_id      text NOT NULL,
  state           text NOT NULL CHECK (state IN ('receiving', 'staged', 'active', 'deleted', 'purging')),
  file_name       text NOT NULL,
  content_type    text NOT NULL,
  size_bytes      bigint,
  sha256          text,
  document_type   text,
  principal_id    text,
  -- The attachment.create job that promoted the upload: a redelivered job finds its attachment.
  create_job_id   text UNIQUE,
  -- The attachment.delete job that deleted it: a redelivered job succeeds again.
  delete_job_id   text UNIQUE,
  -- False until the bytes of a deleted attachment are gone from the blob store.
  blob_purged     boolean NOT NULL DEFAULT false,
  uploaded_at     timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  created_at      timestamptz,
  deleted_at      timestamptz,
  CHECK (state <> 'active' OR (created_at IS NOT NULL AND size_bytes IS NOT NULL AND sha256 IS NOT NULL AND document_type IS NOT NULL))
);
-- Listing: a submission's attachments newest first, keyset on (created_at, attachment_id).
CREATE INDEX attachments_list_idx ON attachments (submission_id, created_at DESC, attachment_id DESC) WHERE state = 'active';
-- The sweep: unfinished uploads by age, deleted ones by deletion time.
CREATE INDEX attachments_unfinished_idx ON attachments (uploaded_at) WHERE state IN ('receiving', 'staged', 'purging');
CREATE INDEX attachments_deleted_idx ON attachments (deleted_at) WHERE state = 'deleted';

-- The PostgreSQL blob store: a blob is its rows in seq order, each at most 256 KiB, so a large
-- file never sits whole in one row or in memory. No foreign key: the store knows blobs, not
-- attachments (an S3-compatible store would replace this table).
CREATE TABLE attachment_chunks (
  blob_key  text NOT NULL,
  seq       integer NOT NULL CHECK (seq >= 0),
  data      bytea NOT NULL,
  PRIMARY KEY (blob_key, seq)
);
-- Documents are mostly compressed already (PDF, images, xlsx/docx): store out of line, uncompressed.
ALTER TABLE attachment_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
