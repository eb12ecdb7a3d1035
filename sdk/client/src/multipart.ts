// multipart/form-data bodies for attachment uploads, streamed from a Blob so that files are never
// held in memory twice, with a known Content-Length and upload progress. A body can be made again
// for a resend (the Blob is read afresh).

export interface UploadProgress {
  /** File bytes handed to the connection so far. */
  sentBytes: number;
  totalBytes: number;
}

export interface MultipartBody {
  contentType: string;
  /** Exact size of the encoded body. */
  length: number;
  /**
   * A fresh stream of the body (call once per attempt). When `stop` aborts, the stream fails, so
   * the connection carrying it is closed rather than left offering the rest of the file.
   */
  stream(onProgress?: (p: UploadProgress) => void, stop?: AbortSignal): ReadableStream<Uint8Array>;
}

const encoder = new TextEncoder();

/** A quoted-string parameter value for Content-Disposition: no quotes, backslashes or line breaks. */
function quoteParam(value: string): string {
  return `"${value.replace(/[\r\n]+/g, ' ').replace(/"/g, '%22').replace(/\\/g, '%5C')}"`;
}

export function multipartBody(
  file: Blob,
  fileName: string,
  fileContentType: string,
  fields: Record<string, string>,
): MultipartBody {
  const boundary = `----partner-sdk-${crypto.randomUUID()}`;
  let head = '';
  for (const [name, value] of Object.entries(fields)) {
    head += `--${boundary}\r\nContent-Disposition: form-data; name=${quoteParam(name)}\r\n\r\n${value}\r\n`;
  }
  head +=
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename=${quoteParam(fileName)}\r\n` +
    `Content-Type: ${fileContentType.replace(/[\r\n]/g, '')}\r\n\r\n`;
  const headBytes = encoder.encode(head);
  const tailBytes = encoder.encode(`\r\n--${boundary}--\r\n`);

  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: headBytes.length + file.size + tailBytes.length,
    stream(onProgress, stop) {
      let stage: 'head' | 'file' | 'tail' = 'head';
      let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
      let sent = 0;
      return new ReadableStream<Uint8Array>({
        start(controller) {
          stop?.addEventListener(
            'abort',
            () => {
              if (stage === 'tail') return;
              stage = 'tail';
              void reader?.cancel(stop.reason).catch(() => undefined);
              controller.error(stop.reason);
            },
            { once: true },
          );
        },
        async pull(controller) {
          if (stage === 'head') {
            controller.enqueue(headBytes);
            stage = 'file';
            onProgress?.({ sentBytes: 0, totalBytes: file.size });
            return;
          }
          if (stage === 'file') {
            reader ??= (file.stream() as ReadableStream<Uint8Array>).getReader();
            const { done, value } = await reader.read();
            if (!done) {
              sent += value.byteLength;
              controller.enqueue(value);
              onProgress?.({ sentBytes: sent, totalBytes: file.size });
              return;
            }
            stage = 'tail';
          }
          controller.enqueue(tailBytes);
          controller.close();
        },
        cancel(reason) {
          return reader?.cancel(reason);
        },
      });
    },
  };
}
