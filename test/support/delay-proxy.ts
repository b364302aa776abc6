import net from 'node:net';

/**
 * A TCP proxy on a free loopback port in front of a server (a redis-server) that holds back every
 * reply `delayMs` before passing it on, in order: a Redis that responds, but slowly. Requests go
 * through at once. `delayMs` may change while connections are open; a reply is never passed on
 * before one that came earlier.
 */
export class DelayProxy {
  delayMs = 0;
  private readonly sockets = new Set<net.Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<DelayProxy> {
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const proxy = new DelayProxy(server, (server.address() as net.AddressInfo).port);
    server.on('connection', (client) => proxy.relay(client, targetPort));
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Closes the listener and every connection through it. */
  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private relay(client: net.Socket, targetPort: number): void {
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
      socket.on('error', () => socket.destroy());
    }
    client.on('data', (chunk) => upstream.write(chunk));
    // When the last reply held back goes out: a later one never overtakes it, whatever delayMs became.
    let lastDue = 0;
    upstream.on('data', (chunk) => {
      const due = Math.max(Date.now() + this.delayMs, lastDue);
      lastDue = due;
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (!client.destroyed) client.write(chunk);
      }, due - Date.now());
      this.timers.add(timer);
    });
  }
}
