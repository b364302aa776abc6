import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import Redis from 'ioredis';
import { REDIS_SENTINEL, RedisServer } from './redis-server';
import { freePort, freePorts } from './node-red-process';
import { waitUntilAsync } from './wait';

/** Debian's redis-cli (package redis-tools, a dependency of redis-server), for `--cluster create`. */
export const REDIS_CLI = process.env.REDIS_CLI ?? '/usr/bin/redis-cli';
export const MASTER_NAME = 'svc-master';

/** A client for a test's own look at a server; its reconnection attempts while that server is away are expected. */
export function adminClient(port: number): Redis {
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: false, maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  return client;
}

async function ask<T>(port: number, command: (client: Redis) => Promise<T>): Promise<T> {
  const client = adminClient(port);
  try {
    return await command(client);
  } finally {
    client.disconnect();
  }
}

/** How many connections of the pack's shared state (named `node-red-location`) the Redis server on `port` holds. */
export async function sharedStateConnections(port: number): Promise<number> {
  const clients = (await ask(port, (c) => c.client('LIST'))) as string;
  return clients.split('\n').filter((line) => line.includes('name=node-red-location ')).length;
}

/** The port of the master `sentinel` names now. */
async function masterNamedBy(sentinel: RedisServer): Promise<number> {
  const [, port] = (await ask(sentinel.port, (c) => c.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', MASTER_NAME))) as [string, string];
  return Number(port);
}

/**
 * A Sentinel deployment on loopback ports, as Debian's redis-server and redis-sentinel run it: one
 * master, one replica, three Sentinels (quorum 2) that fail over within a few seconds of a master
 * that stops responding, or at once on `SENTINEL FAILOVER`. Every server is stopped by its PID.
 */
export class SentinelDeployment {
  private constructor(
    readonly servers: RedisServer[],
    readonly sentinels: RedisServer[],
  ) {}

  static async start(): Promise<SentinelDeployment> {
    const servers: RedisServer[] = [];
    const sentinels: RedisServer[] = [];
    try {
      servers.push(await RedisServer.start());
      servers.push(await RedisServer.start(undefined, { args: ['--replicaof', '127.0.0.1', String(servers[0].port)] }));
      await waitUntilAsync(
        async () => (await ask(servers[1].port, (c) => c.info('replication'))).includes('master_link_status:up'),
        'the replica in sync',
        15_000,
      );
      for (let i = 0; i < 3; i++) {
        const config = [
          `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${servers[0].port} 2`,
          `sentinel down-after-milliseconds ${MASTER_NAME} 1000`,
          `sentinel failover-timeout ${MASTER_NAME} 5000`,
          `sentinel parallel-syncs ${MASTER_NAME} 1`,
          '',
        ].join('\n');
        sentinels.push(await RedisServer.start(undefined, { config, program: REDIS_SENTINEL, ready: '+monitor master', port: await freePort() }));
      }
      const deployment = new SentinelDeployment(servers, sentinels);
      // Every Sentinel knows the replica and the other Sentinels before a failover is asked for.
      await waitUntilAsync(
        async () => {
          const views = await Promise.all(sentinels.map((s) => ask(s.port, (c) => c.call('SENTINEL', 'MASTER', MASTER_NAME) as Promise<string[]>)));
          return views.every((view) => Number(field(view, 'num-slaves')) === 1 && Number(field(view, 'num-other-sentinels')) === 2);
        },
        'the Sentinels to know the replica and each other',
        30_000,
      );
      return deployment;
    } catch (err) {
      await Promise.all([...servers, ...sentinels].map((server) => server.remove()));
      throw err;
    }
  }

  /** The URL the nodes are given. */
  url(): string {
    return `redis-sentinel://${this.sentinels.map((s) => `127.0.0.1:${s.port}`).join(',')}/${MASTER_NAME}`;
  }

  /** The port of the master the first Sentinel names now. */
  masterPort(): Promise<number> {
    return masterNamedBy(this.sentinels[0]);
  }

  server(port: number): RedisServer {
    const server = this.servers.find((s) => s.port === port);
    if (!server) throw new Error(`no server of the deployment on port ${port}`);
    return server;
  }

  /** `SENTINEL FAILOVER` through the first Sentinel; resolves with the new master's port once every Sentinel names it. */
  async failover(): Promise<number> {
    const before = await this.masterPort();
    await ask(this.sentinels[0].port, (c) => c.call('SENTINEL', 'FAILOVER', MASTER_NAME));
    return this.switched(before);
  }

  /** Resolves with the new master's port once every Sentinel asked (all unless told) names another master than `before`. */
  async switched(before: number, timeoutMs = 30_000, asked = this.sentinels): Promise<number> {
    let now = before;
    await waitUntilAsync(
      async () => {
        const ports = await Promise.all(asked.map(masterNamedBy));
        now = ports[0];
        return ports.every((port) => port === now && port !== before);
      },
      'every Sentinel to name the new master',
      timeoutMs,
    );
    return now;
  }

  async remove(): Promise<void> {
    await Promise.all([...this.sentinels, ...this.servers].map((server) => server.remove()));
  }
}

/**
 * A Redis Cluster of three masters (no replicas) on loopback ports, created with `redis-cli --cluster
 * create`; `migrateSlot` moves one slot's keys to another master one key at a time, as a resharding does.
 */
export class RedisClusterDeployment {
  private constructor(readonly servers: RedisServer[]) {}

  static async start(): Promise<RedisClusterDeployment> {
    const servers: RedisServer[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        // The cluster bus port is named too: Redis's default (the port + 10,000) falls in the range the
        // kernel draws connections' own ports from, where a client's connection can hold it first.
        const [port, busPort] = await freePorts(2);
        const args = ['--cluster-enabled', 'yes', '--cluster-port', String(busPort), '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '3000'];
        servers.push(await RedisServer.start(undefined, { port, args }));
      }
      await promisify(execFile)(REDIS_CLI, ['--cluster', 'create', ...servers.map((s) => `127.0.0.1:${s.port}`), '--cluster-replicas', '0', '--cluster-yes'], {
        timeout: 30_000,
      });
      await waitUntilAsync(
        async () => (await Promise.all(servers.map((s) => ask(s.port, (c) => c.cluster('INFO'))))).every((info) => info.includes('cluster_state:ok')),
        'the cluster to be ok on every node',
        30_000,
      );
      return new RedisClusterDeployment(servers);
    } catch (err) {
      await Promise.all(servers.map((server) => server.remove()));
      throw err;
    }
  }

  url(): string {
    return `redis-cluster://${this.servers.map((s) => `127.0.0.1:${s.port}`).join(',')}`;
  }

  async slotOf(key: string): Promise<number> {
    return ask(this.servers[0].port, (c) => c.cluster('KEYSLOT', key));
  }

  /** The server that holds `slot` now. */
  async ownerOf(slot: number): Promise<RedisServer> {
    const slots = await ask(this.servers[0].port, (c) => c.cluster('SLOTS'));
    const range = slots.find(([from, to]) => slot >= from && slot <= to);
    const server = this.servers.find((s) => s.port === range?.[2]?.[1]);
    if (!server) throw new Error(`slot ${slot} is not served`);
    return server;
  }

  /**
   * Moves `slot` from its master to `to` while clients use it: IMPORTING/MIGRATING, then its keys one
   * by one with `pauseMs` between them (clients meanwhile get ASK and TRYAGAIN), then the slot
   * assigned to `to` on every master. Resolves with the number of keys moved.
   */
  async migrateSlot(slot: number, to: RedisServer, pauseMs: number): Promise<number> {
    const from = await this.ownerOf(slot);
    if (from === to) throw new Error(`slot ${slot} is on ${to.port} already`);
    const [source, target] = [adminClient(from.port), adminClient(to.port)];
    try {
      const [sourceId, targetId] = await Promise.all([source.cluster('MYID'), target.cluster('MYID')]);
      await target.cluster('SETSLOT', slot, 'IMPORTING', sourceId);
      await source.cluster('SETSLOT', slot, 'MIGRATING', targetId);
      let moved = 0;
      for (let round = 0; round < 10_000; round++) {
        const [key] = await source.cluster('GETKEYSINSLOT', slot, 1);
        if (key === undefined) break;
        await source.migrate('127.0.0.1', to.port, key, 0, 5000);
        moved++;
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
      await target.cluster('SETSLOT', slot, 'NODE', targetId);
      await source.cluster('SETSLOT', slot, 'NODE', targetId);
      for (const server of this.servers.filter((s) => s !== from && s !== to)) await ask(server.port, (c) => c.cluster('SETSLOT', slot, 'NODE', targetId));
      return moved;
    } finally {
      source.disconnect();
      target.disconnect();
    }
  }

  async remove(): Promise<void> {
    await Promise.all(this.servers.map((server) => server.remove()));
  }
}

/** The value after `name` in a flat reply of SENTINEL MASTER. */
function field(reply: string[], name: string): string | undefined {
  const index = reply.indexOf(name);
  return index < 0 ? undefined : reply[index + 1];
}

/** Whether redis-server, redis-sentinel and redis-cli are installed. */
export function deploymentToolsAvailable(): boolean {
  return RedisServer.available() && fs.existsSync(REDIS_SENTINEL) && fs.existsSync(REDIS_CLI);
}
