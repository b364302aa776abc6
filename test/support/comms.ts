import { WebSocket } from 'undici';

/**
 * Everything a Node-RED process publishes to the editor on its comms websocket, as the frames' text:
 * node statuses, the debug sidebar (with every warning and error a node logs), notifications. Node-RED
 * sends each connection every topic; a subscription to `status/#` also brings the statuses it kept.
 * No adminAuth: for a Node-RED that has none.
 */
export class CommsRecorder {
  readonly frames: string[] = [];

  private constructor(private readonly socket: WebSocket) {
    socket.onmessage = (event) => this.frames.push(String(event.data));
  }

  static async open(port: number, adminRoot = '/', timeoutMs = 10_000): Promise<CommsRecorder> {
    const socket = new WebSocket(`ws://127.0.0.1:${port}${adminRoot}comms`);
    const recorder = new CommsRecorder(socket);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the comms websocket did not open within ${timeoutMs} ms`)), timeoutMs);
      socket.onopen = () => {
        clearTimeout(timer);
        socket.send(JSON.stringify({ subscribe: 'status/#' }));
        resolve();
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
