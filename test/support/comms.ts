import { WebSocket } from 'undici';

/**
 * Everything a Node-RED process publishes to the editor on its comms websocket, as the frames' text:
 * node statuses, the debug sidebar (with every warning and error a node logs), notifications. Node-RED
 * sends each connection every topic; a subscription to `status/#` also brings the statuses it kept.
 * With adminAuth, the connection first sends the editor's access token, as the editor does.
 */
export class CommsRecorder {
  readonly frames: string[] = [];

  private constructor(private readonly socket: WebSocket) {
    socket.onmessage = (event) => this.frames.push(String(event.data));
  }

  /** Opens the websocket; `token`: the access token of POST /auth/token, for a Node-RED with adminAuth. */
  static async open(port: number, adminRoot = '/', timeoutMs = 10_000, token?: string): Promise<CommsRecorder> {
    const socket = new WebSocket(`ws://127.0.0.1:${port}${adminRoot}comms`);
    const recorder = new CommsRecorder(socket);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the comms websocket did not open within ${timeoutMs} ms`)), timeoutMs);
      const subscribe = () => {
        clearTimeout(timer);
        socket.send(JSON.stringify({ subscribe: 'status/#' }));
        resolve();
      };
      socket.onopen = () => {
        if (token === undefined) return subscribe();
        // The editor's handshake: its token, then Node-RED's {"auth":"ok"} before anything else.
        socket.onmessage = (event) => {
          const reply = String(event.data);
          if (reply !== JSON.stringify({ auth: 'ok' })) return reject(new Error(`the comms websocket refused the token: ${reply}`));
          socket.onmessage = (next) => recorder.frames.push(String(next.data));
          subscribe();
        };
        socket.send(JSON.stringify({ auth: token }));
      };
      socket.onerror = () => {
        clearTimeout(timer);
        reject(new Error('the comms websocket failed'));
      };
    });
    return recorder;
  }

  /** The messages received so far, one per topic and data, as `{topic, data}`. */
  messages(): Array<{ topic: string; data: unknown }> {
    return this.frames.flatMap((frame) => {
      const parsed = JSON.parse(frame) as unknown;
      return (Array.isArray(parsed) ? parsed : [parsed]) as Array<{ topic: string; data: unknown }>;
    });
  }

  close(): void {
    this.socket.close();
  }
}
