// Where attachment bytes live: a small blob-store interface (what an S3-compatible store would
// implement: put = multipart upload, get = ranged reads, delete) and the default implementation in
// PostgreSQL, which keeps each blob as rows of at most 256 KiB so neither a row nor this process
// ever holds a whole file.
import type { Pool } from '@partner/shared/db/pg';

export interface BlobStore {
  /**
   * Stores a new blob under key from chunks, in order, pulling the next chunk only once the
   * previous ones are written (backpressure). Resolves once every byte is durable. When chunks
   * throws or a write fails, removes what it wrote (best effort) and rethrows.
   */
  put(key: string, chunks: AsyncIterable<Uint8Array>): Promise<void>;
  /** The blob's bytes in order, in pieces of the store's choosing. Nothing when it does not exist. */
  get(key: string): AsyncIterable<Buffer>;
  /** Removes the blob; a missing blob is not an error. */
  delete(key: string): Promise<void>;
}

export const DEFAULT_ROW_BYTES = 256 * 1024;

export class PgBlobStore implements BlobStore {
  constructor(
    private readonly pool: Pool,
    private readonly rowBytes = DEFAULT_ROW_BYTES,
  ) {}

  async put(key: string, chunks: AsyncIterable<Uint8Array>): Promise<void> {
    let seq = 0;
    // One row's worth of bytes is gathered here, then written; a fresh buffer for each row, as the
    // previous one may still be referenced by the driver.
    let row = Buffer.allocUnsafe(this.rowBytes);
    let filled = 0;
    const flush = async (data: Buffer) => {
      await this.pool.query('INSERT INTO attachment_chunks (blob_key, seq, data) VALUES ($1, $2, $3)', [key, seq, data]);
      seq += 1;
    };
    try {
      for await (const chunk of chunks) {
        let offset = 0;
        while (offset < chunk.length) {
          const n = Math.min(chunk.length - offset, this.rowBytes - filled);
          row.set(chunk.subarray(offset, offset + n), filled);
          filled += n;
          offset += n;
          if (filled === this.rowBytes) {
            await flush(row);
            row = Buffer.allocUnsafe(this.rowBytes);
            filled = 0;
          }
        }
      }
      if (filled > 0) await flush(row.subarray(0, filled));
    } catch (err) {
      await this.delete(key).catch(() => undefined);
      throw err;
    }
  }

  async *get(key: string): AsyncIterable<Buffer> {
    // Row by row (not one big result), so memory holds one row at a time.
    for (let seq = 0; ; seq++) {
      const r = await this.pool.query<{ data: Buffer }>('SELECT data FROM attachment_chunks WHERE blob_key = $1 AND seq = $2', [key, seq]);
      const data = r.rows[0]?.data;
      if (!data) return;
      yield data;
    }
  }

  async delete(key: string): Promise<void> {
    await this.pool.query('DELETE FROM attachment_chunks WHERE blob_key = $1', [key]);
  }
}
