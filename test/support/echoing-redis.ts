import net from 'node:net';

/**
 * A hostile Redis: every command is refused with an error that repeats it whole, the password too
 * (ioredis 6 sends it inside `HELLO 3 AUTH`). One error per command, as a server replies to a pipeline.
 */
export async function startEchoingRedis(encoding: BufferEncoding = 'utf8'): Promise<net.Server> {
  const server = net.createServer((socket) => {
    let pending = '';
    socket.on('data', (data) => {
      pending += data.toString(encoding);
      for (;;) {
        const command = firstCommand(pending);
        if (command === undefined) return;
        pending = pending.slice(command.length);
        socket.write(`-ERR refused: ${command.replace(/\r\n/g, ' ')}\r\n`);
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** The first whole RESP array of bulk strings in `text`, or undefined while it is incomplete. */
function firstCommand(text: string): string | undefined {
  const head = /^\*(\d+)\r\n/.exec(text);
  if (!head) return text === '' ? undefined : text;
  let at = head[0].length;
  for (let i = 0; i < Number(head[1]); i++) {
    const bulk = /^\$(\d+)\r\n/.exec(text.slice(at));
    if (!bulk) return undefined;
    at += bulk[0].length + Number(bulk[1]) + 2;
    if (at > text.length) return undefined;
  }
  return text.slice(0, at);
}

/** The refusal of the command carrying the password, masked: `AUTH` alone (RESP2) or inside `HELLO 3` (ioredis 6). */
export const REFUSED_AUTH = /refused: \*\d+ (?:\$5 hello \$1 3 )?\$4 auth (?:\$\d+ \S+ )?\$\d+ \*\*\*/i;
