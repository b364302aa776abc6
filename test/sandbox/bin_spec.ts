import { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { DEMO_WEBHOOK_SECRET } from '../../sandbox/banner';
import { SANDBOX_DEFAULTS } from '../../sandbox/options';
import { freePort } from '../support/node-red-process';
import { REPO_ROOT } from '../support/paths';
import { runCommand, spawnGroup } from '../support/process-group';
import { waitUntil } from '../support/wait';

/**
 * The package's `svc-sandbox` command (issue 52 point 4), run as npm runs it: the file package.json's
 * `bin` names, in a child process of its own (the release suite runs it from the installed tarball).
 */

const MANIFEST = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string>; files: string[] };
const BIN = path.join(REPO_ROOT, MANIFEST.bin['svc-sandbox']);

interface Reply {
  status: number;
  json: Record<string, unknown>;
}

/** One exchange on a connection of its own, closed after it (nothing left open when the sandbox stops). */
function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { ...headers, connection: 'close' }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, json: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown> });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function printSettings(...args: string[]): Promise<Record<string, string>> {
  const { stdout } = await runCommand(process.execPath, [BIN, '--print-settings', ...args], { cwd: os.tmpdir(), timeoutMs: 20_000 });
  const lines = stdout.trim().split('\n');
  should(lines).have.length(1);
  return JSON.parse(lines[0]) as Record<string, string>;
}

describe('svc-sandbox, the bin of the package', function () {
  it('is a Node script package.json names and ships, with the compiled sandbox it requires', function () {
    should(fs.readFileSync(BIN, 'utf8')).startWith('#!/usr/bin/env node\n');
    should(MANIFEST.files).containEql('bin/').and.containEql('dist/sandbox/');
  });

  it('prints one JSON line with every setting an svc-config needs, and exits', async function () {
    should(await printSettings()).eql({
      baseUrl: 'http://127.0.0.1:18790',
      authUrl: 'http://127.0.0.1:18790',
      sandboxUrl: 'http://127.0.0.1:18790',
      audience: SANDBOX_DEFAULTS.audience,
      projectId: SANDBOX_DEFAULTS.projectId,
      clientId: SANDBOX_DEFAULTS.clientId,
      clientSecret: SANDBOX_DEFAULTS.clientSecret,
      apiKey: SANDBOX_DEFAULTS.apiKey,
      pubsubApiKey: SANDBOX_DEFAULTS.pubsubApiKey,
      webhookSecret: DEMO_WEBHOOK_SECRET,
    });
    should((await printSettings('--port', '18999', '--host', 'localhost')).baseUrl).equal('http://localhost:18999');
  });

  it('prints its usage with --help, and refuses an unknown option with it', async function () {
    should((await runCommand(process.execPath, [BIN, '--help'], { cwd: os.tmpdir(), timeoutMs: 20_000 })).stdout).match(/^Usage: svc-sandbox /);
    const refused = await runCommand(process.execPath, [BIN, '--prot', '1'], { cwd: os.tmpdir(), timeoutMs: 20_000 }).then(
      () => undefined,
      (err: Error) => err.message,
    );
    should(refused)
      .match(/exit code 2/)
      .and.match(/Unknown option '--prot'/)
      .and.match(/Usage: svc-sandbox /);
  });

  describe('--port N --state FILE', function () {
    let child: ChildProcess | undefined;
    let dir: string;
    let output = '';
    let exited: Promise<number | null>;

    before(async function () {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sandbox-bin-'));
      const port = await freePort();
      child = spawnGroup(process.execPath, [BIN, '--port', String(port), '--state', path.join(dir, 'state.json')], {
        cwd: dir,
        env: { ...process.env, SANDBOX_DURATIONS: 'off' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const started = child;
      exited = new Promise((resolve) => started.once('exit', (code) => resolve(code)));
      child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      await waitUntil(() => output.includes(`sandbox platform listening on http://127.0.0.1:${port}`), `svc-sandbox to listen:\n${output}`, 20_000);
    });

    after(function () {
      if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('responds to a token request and a geocode with the settings --print-settings gives for that port', async function () {
      const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1] ?? '';
      const settings = await printSettings('--port', port);
      const token = await send(
        `${settings.authUrl}/oauth/token`,
        'POST',
        { 'content-type': 'application/json' },
        JSON.stringify({ client_id: settings.clientId, client_secret: settings.clientSecret, audience: settings.audience, grant_type: 'client_credentials' }),
      );
      should(token.status).equal(200);
      should(token.json.access_token).be.a.String().and.not.be.empty();
      const geocode = await send(`${settings.baseUrl}/v1/geocode?address=12%20Main%20Street`, 'POST', {
        'x-svc-project-id': settings.projectId,
        'x-svc-api-key': settings.apiKey,
        accept: 'application/json',
      });
      should(geocode.status).equal(200);
      should(geocode.json).match({ type: 'FeatureCollection', features: [{ type: 'Feature' }] });
    });

    it('writes one line on its console for each webhook attempt that fails (issue 54)', async function () {
      const base = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] ?? '';
      const pubsub = { apikey: SANDBOX_DEFAULTS.pubsubApiKey, 'content-type': 'application/json' };
      const topic = await send(`${base}/v1/pubsub/topics`, 'POST', pubsub, JSON.stringify({ Name: 'unreachable', Description: '' }));
      const topicId = (topic.json.data as { id: number }).id;
      // Nothing listens there: the attempt fails at once.
      const hook = `http://127.0.0.1:${await freePort()}/hook`;
      const body = JSON.stringify({ WebhookAddress: hook, LocationIds: ['cell-1'], TopicId: topicId });
      should((await send(`${base}/v1/pubsub/subscriptions`, 'POST', pubsub, body)).status).equal(200);
      const from = output.length;
      should((await send(`${base}/v1/pubsub/topics/${topicId}/publish`, 'POST', pubsub, JSON.stringify({ LocationId: 'cell-1', Data: {} }))).status).equal(200);
      await waitUntil(() => output.slice(from).includes('attempt 1 of 5 failed'), `the failed attempt on the console:\n${output.slice(from)}`, 10_000);
      should(output.slice(from)).match(
        new RegExp(`sandbox: webhook delivery [0-9a-f-]{36} to ${hook} \\(subscription 1\\), attempt 1 of 5 failed: no response \\(.*\\); trying again in 1 s`),
      );
      should((await send(`${base}/v1/pubsub/topics/${topicId}`, 'DELETE', pubsub)).status).equal(204);
    });

    it('stops on SIGTERM by its PID, with its state written to FILE', async function () {
      process.kill(child?.pid ?? 0, 'SIGTERM');
      should(await exited).equal(0);
      should(JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8'))).match({ version: 1, topics: [], subscriptions: [] });
    });
  });
});
