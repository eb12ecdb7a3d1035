// Receives a multipart/form-data upload and streams its `file` part into the submission service
// (gRPC client streaming: the metadata, then chunks of at most 64 KiB), computing size and sha256
// on the way. Nothing is buffered beyond one socket read: the multipart parser, the gRPC stream
// and the service's writes pass backpressure back to the client's socket.
//
// Failures are answered at once and the rest of the request body is read and thrown away (so the
// client sees the error, not a reset connection). Past the limit the service is sent the byte that
// crosses it, so it refuses the upload and has removed what it stored before the 413 is sent.
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createHash } from 'node:crypto';
import { Busboy, type BusboyHeaders, type BusboyInstance } from '@fastify/busboy';
import { DomainError } from '@partner/shared/domain/errors';
import { openClientStream, type PromiseClient, type serviceDefs } from '@partner/shared/grpc';
import { sanitiseFileName } from './file-names.js';
import { DEFAULT_DOCUMENT_TYPE, DOCUMENT_TYPES, isDocumentType, resolveMediaType, ALLOWED_MEDIA_TYPES, type DocumentType } from './media-types.js';

type SubmissionDef = ReturnType<typeof serviceDefs>['submission'];

export const UPLOAD_CHUNK_BYTES = 64 * 1024;
/** Room for the multipart framing and the documentType field beyond the file's own limit. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

export interface UploadTarget {
  client: PromiseClient<SubmissionDef>;
  def: SubmissionDef;
  owner: { tenantId: string; partnerId: string };
  submissionId: string;
  limitBytes: number;
  /** Deadline of the streaming call. */
  timeoutMs: number;
}

export interface ReceivedUpload {
  uploadId: string;
  sizeBytes: number;
  sha256: string;
  fileName: string;
  contentType: string;
  documentType: DocumentType;
}

const invalid = (message: string, field?: string): DomainError =>
  new DomainError('validation_error', message, field ? { details: [{ field, issue: message }] } : {});

export const tooLarge = (limit: number): DomainError =>
  new DomainError('payload_too_large', `the file may be at most ${limit} bytes`);

/** The multipart parser for the request, or undefined when its Content-Type has no boundary. */
function createParser(req: IncomingMessage): BusboyInstance | undefined {
  try {
    return Busboy({
      headers: req.headers as BusboyHeaders,
      defCharset: 'utf8',
      preservePath: false,
      limits: { files: 1, fields: 4, parts: 5, fieldSize: 1024, fieldNameSize: 100, headerPairs: 20, headerSize: 16 * 1024 },
    });
  } catch {
    return undefined;
  }
}

/** Reads the upload's form and stages its file in the submission service. Rejects with a DomainError. */
export function receiveUpload(req: IncomingMessage, target: UploadTarget): Promise<ReceivedUpload> {
  return new Promise<ReceivedUpload>((resolve, reject) => {
    const parser = createParser(req);
    if (!parser) {
      req.resume();
      reject(new DomainError('unsupported_media_type', 'send the upload as multipart/form-data with a boundary'));
      return;
    }
    let settled = false;
    let file: Readable | undefined;
    let call: ReturnType<typeof openClientStream<SubmissionDef, 'UploadAttachment'>> | undefined;
    let staging: Promise<Omit<ReceivedUpload, 'documentType'>> | undefined;
    let documentType: string | undefined;

    const discard = (uploadId: string) =>
      target.client.DiscardUpload({ owner: target.owner, uploadId }).catch(() => undefined /* the sweep removes it */);

    /**
     * Answers with err. `fileComplete`: the parser has gone past the file part (a later part is what
     * is wrong), so the file is forwarded to its end, staged and removed again before the answer
     * goes out, and a partner who reads the 400 finds nothing of it stored. Otherwise the file is cut
     * off (the client left, the body is malformed): the call is cancelled and the service removes what
     * it received on its own (what it cannot, the sweep does).
     */
    const fail = (err: unknown, fileComplete = false) => {
      if (settled) return;
      settled = true;
      // Stop reading the form; what is left of the body is drained and dropped.
      req.unpipe(parser);
      parser.removeAllListeners('finish');
      parser.on('error', () => undefined);
      const error = err instanceof DomainError ? err : new DomainError('internal', 'internal error', { cause: err });
      req.resume();
      // A file staged before the form turned out bad is removed again (discard never rejects).
      const removed = staging?.then((s) => discard(s.uploadId), () => undefined);
      if (removed && fileComplete) {
        void removed.then(() => reject(error));
        return;
      }
      file?.destroy();
      call?.cancel();
      reject(error);
    };
    /** A later part of the form is wrong: the file part before it (if any) is complete. */
    const failAfterFile = (err: unknown) => fail(err, true);

    const forward = async (stream: Readable, fileName: string, contentType: string): Promise<Omit<ReceivedUpload, 'documentType'>> => {
      const upload = openClientStream(target.client, target.def, 'UploadAttachment', { timeoutMs: target.timeoutMs });
      call = upload;
      await upload.write({
        metadata: { owner: target.owner, submissionId: target.submissionId, fileName, contentType, maxSizeBytes: target.limitBytes },
      });
      const hash = createHash('sha256');
      let size = 0;
      for await (const piece of stream as AsyncIterable<Buffer>) {
        size += piece.length;
        hash.update(piece);
        for (let offset = 0; offset < piece.length; offset += UPLOAD_CHUNK_BYTES) {
          await upload.write({ chunk: piece.subarray(offset, offset + UPLOAD_CHUNK_BYTES) });
        }
        if (size > target.limitBytes) {
          // The service has been sent more than the limit and refuses the upload, removing what it
          // stored; wait for that, then answer 413.
          const res = await upload.finish().catch(() => undefined);
          if (res) void discard(res.uploadId);
          throw tooLarge(target.limitBytes);
        }
      }
      const sha256 = hash.digest('hex');
      await upload.write({ end: { sizeBytes: size, sha256 } });
      if (size === 0) {
        // The service refuses it too, having removed its record before it answers.
        await upload.finish().catch(() => undefined);
        throw invalid('the file is empty', 'file');
      }
      const res = await upload.finish();
      if (res.sha256 !== sha256 || Number(res.sizeBytes) !== size) {
        void discard(res.uploadId);
        throw new DomainError('internal', 'the stored file does not match the upload; retry');
      }
      return { uploadId: res.uploadId, sizeBytes: size, sha256, fileName, contentType };
    };

    parser.on('file', (name, stream, rawName, _encoding, mimeType) => {
      // A truncated body makes the part stream emit an error. The forwarding loop sees it through
      // its iterator; a skipped part has no other listener, and an unheard 'error' would crash
      // the process.
      stream.on('error', () => undefined);
      if (settled) {
        stream.resume();
        return;
      }
      if (name !== 'file') {
        stream.resume();
        return failAfterFile(invalid(`unexpected file part "${name}": send the file as the part named "file"`, name));
      }
      file = stream;
      const fileName = sanitiseFileName(rawName ?? '');
      const contentType = resolveMediaType(mimeType, fileName);
      if (!contentType) {
        return fail(
          new DomainError(
            'unsupported_media_type',
            `files of type ${mimeType || 'unknown'} are not accepted; allowed: ${Object.keys(ALLOWED_MEDIA_TYPES).join(', ')}`,
          ),
        );
      }
      staging = forward(stream, fileName, contentType);
      staging.catch(fail);
    });

    parser.on('field', (name, value, nameTruncated, valueTruncated) => {
      if (settled) return;
      if (name === 'file') return failAfterFile(invalid('the "file" part must be a file (with a filename)', 'file'));
      if (name !== 'documentType' || nameTruncated) return failAfterFile(invalid(`unknown field "${name}"`, name));
      if (documentType !== undefined) return failAfterFile(invalid('documentType may be given once', 'documentType'));
      if (valueTruncated || !isDocumentType(value)) {
        return failAfterFile(invalid(`must be one of: ${DOCUMENT_TYPES.join(', ')}`, 'documentType'));
      }
      documentType = value;
    });

    parser.on('filesLimit', () => failAfterFile(invalid('send exactly one file, in the part named "file"', 'file')));
    parser.on('fieldsLimit', () => failAfterFile(invalid('too many form fields; the form has "file" and optionally "documentType"')));
    parser.on('partsLimit', () => failAfterFile(invalid('too many form parts; the form has "file" and optionally "documentType"')));
    parser.on('error', () => fail(invalid('the multipart body is malformed')));
    parser.on('finish', () => {
      if (settled) return;
      if (!staging) return fail(invalid('the form has no "file" part', 'file'));
      staging.then((staged) => {
        if (settled) return;
        settled = true;
        resolve({ ...staged, documentType: (documentType as DocumentType | undefined) ?? DEFAULT_DOCUMENT_TYPE });
      }, fail);
    });

    // The client went away mid-body: stop, and let the service drop what it received.
    req.once('close', () => {
      if (!req.complete) fail(invalid('the request body ended early'));
    });
    req.pipe(parser);
  });
}
