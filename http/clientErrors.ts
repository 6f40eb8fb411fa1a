import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { DomainError } from '../domain/shared/errors';

/**
 * For the routers' `allowedMethods`: a method no route knows (TRACE, PROPFIND) is the client's
 * mistake, a 405 like any other method a path does not take; the router's own 501 would read as ours.
 */
export const unknownMethod = (): Error => new DomainError('METHOD_NOT_ALLOWED', 'Method not allowed', 405);

/** Node's own choices of status (see its default 'clientError' handling), with a sentence each. */
function statusOf(code: string | undefined): [number, string] {
  if (code === 'HPE_HEADER_OVERFLOW') return [431, 'The request line and headers are too large (at most 16 KB)'];
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return [413, 'The chunk extensions are too large'];
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, 'The request took too long to arrive'];
  // The client closed its side (socket.end()) before the request was whole.
  if (code === 'HPE_INVALID_EOF_STATE') return [400, 'The connection was closed before the request was complete'];
  return [400, 'Malformed HTTP request'];
}

/**
 * Answers the requests Node's HTTP parser refuses before the app sees them (malformed, headers over
 * the limit, too slow) as the app would, in `format`; Node's default answer has no body. Nothing is
 * written once a response has begun on the connection, which is then only closed.
 */
export function answerClientErrors(server: Server, log: Logger, format: (status: number, message: string) => { type: string; body: string }): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    log.debug({ code: error.code }, 'refused a malformed request or a connection that failed');
    // `_httpMessage`: the response in progress on this connection, as Node's default handling checks.
    const inProgress = (socket as { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inProgress?.headersSent) {
      socket.destroy();
      return;
    }
    const [status, message] = statusOf(error.code);
    const { type, body } = format(status, message);
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    // Destroyed at once, as Node does: that also aborts the request in progress on this connection
    // (a client half-closing mid-body), whose handler would otherwise wait for the rest of its body.
    socket.destroy();
  });
}
