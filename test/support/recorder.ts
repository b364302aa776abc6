import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A server standing for an address the user never configured: it records what reaches it and returns nothing useful. */
export interface Recorder {
  url: string;
  seen: Array<{ method: string; url: string; body: string }>;
  close(): Promise<void>;
}

export async function startRecorder(): Promise<Recorder> {
  const seen: Recorder['seen'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"recorded"}');
    });
  });
  // As a proxy: a CONNECT is recorded and refused.
  server.on('connect', (req: http.IncomingMessage, socket: Socket) => {
    seen.push({ method: 'CONNECT', url: req.url ?? '', body: '' });
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
