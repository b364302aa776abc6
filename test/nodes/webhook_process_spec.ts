import net from 'node:net';
import should from 'should';
import { ADMIN_AUTH, Json, WebhookRig, postSigned, rawRequest, reportingTab, webhookNodes } from '../support/webhook-process';
import { runtimeUnderTest } from '../support/node-red-process';
import { signatureHeader, webhookDigest } from '../bench/webhook-signing';
import { extendSha256, sha256Padding } from '../support/sha256-extension';
import { waitUntil } from '../support/wait';

/**
 * svc-webhook-in in a real Node-RED process (4.1 under `npm test`, 5 under `npm run test:nr5`),
 * attacked as issue 19 did: paths the editor serves, routes that would take its requests, request
 * targets with a fragment or in absolute form, bodies that are too deep, not UTF-8 or start with a
 * BOM, length-extended bodies, replays across redeploys, secret rotations and restarts, and floods
 * of aborted uploads. Every output and status of the flows reaches a collector over HTTP.
 */

const SECRET = 'process-suite-secret';
const TAB = { id: 'tab-hooks', label: 'Webhooks' };
const nowSec = () => String(Math.floor(Date.now() / 1000));

describe(`svc-webhook-in in a real ${runtimeUnderTest().title}`, function () {
  this.timeout(120_000);

  /** A webhook (id `id`, path `url`) and any other nodes, on one reporting tab. */
  const flow = (rig: WebhookRig, hooks: Json[], others: Json[] = [], secrets: Json = { secret: SECRET }): Json[] =>
    reportingTab(TAB, rig.collector.url, [...others, ...hooks.flatMap((hook) => webhookNodes(TAB.id, { credentials: secrets, ...hook }))]);

  describe('with the editor and the nodes both at "/" and adminAuth on', function () {
    const rig = new WebhookRig({ adminAuth: ADMIN_AUTH });
    before(async function () {
      await rig.start();
    });
    after(async function () {
      await rig.stop();
    });

    it('refuses paths the editor serves at deploy (red status naming the clash, one log line, no listener); deploys and logins keep working, also after a restart', async function () {
      const editorPaths = ['/flows', '/auth/token', '/settings', '/nodes', '/FLOWS/', 'flow/abc'];
      const hooks = editorPaths.map((url, i) => ({ id: `editor-${i}`, url }));
      const logFrom = rig.nodeRed.log.length;
      should(await rig.deploy(flow(rig, [...hooks, { id: 'fine', url: '/fine-hook' }]))).be.within(200, 299);
      for (const [i, url] of editorPaths.entries()) {
        const status = await rig.statusOf(`editor-${i}`);
        should(status).match({ fill: 'red', text: `editor path ${url.startsWith('/') ? url : `/${url}`}` });
        const lines = rig.logSince(logFrom).filter((line) => line.includes(`[svc-webhook-in:editor-${i}]`));
        should(lines).have.length(1);
        should(lines[0]).match(/\[error\].*not listening: POST \S+ is a path of Node-RED's editor \(httpAdminRoot \/\)/);
      }
      should(await rig.statusOf('fine')).match({ fill: 'green', text: 'listening' });
      // The editor still works: log in, deploy again.
      should((await rig.login()).status).equal(200);
      should(await rig.deploy(flow(rig, [...hooks, { id: 'fine', url: '/fine-hook' }]))).be.within(200, 299);
      await rig.killAndRestart();
      should((await rig.login()).status).equal(200);
      should(await rig.deploy(flow(rig, [{ id: 'fine', url: '/fine-hook' }]))).be.within(200, 299);
    });

    it('names a route registered earlier that would take its requests (core http in on /:x), does not listen, and leaves that route its bodies', async function () {
      const catchAll = [
        { id: 'catch-all', type: 'http in', name: 'catch-all', url: '/:x', method: 'post', wires: [['echo']] },
        { id: 'echo', type: 'http response', statusCode: '200', wires: [] },
      ];
      const logFrom = rig.nodeRed.log.length;
      should(await rig.deploy(flow(rig, [{ id: 'shadowed', url: '/shadowed-hook' }], catchAll))).be.within(200, 299);
      should(await rig.statusOf('shadowed')).match({ fill: 'red', text: 'path in use by catch-all' });
      const lines = rig.logSince(logFrom).filter((line) => line.includes('[svc-webhook-in:shadowed]'));
      should(lines).have.length(1);
      should(lines[0]).containEql('not listening: POST /shadowed-hook is already received by "catch-all" (http in) on tab "Webhooks"');
      // The http in node gets its request whole.
      const res = await rig.nodeRed.request('/shadowed-hook', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"kept":true}' });
      should(await res.json()).eql({ kept: true });
    });

    it('names the other webhook node and its tab when two share a path', async function () {
      const second = { id: 'tab-second', label: 'Second tab' };
      const flows = [
        ...flow(rig, [{ id: 'first-hook', name: 'Hook A', url: '/same-path' }]),
        ...reportingTab(second, rig.collector.url, webhookNodes(second.id, { id: 'second-hook', url: '/same-path', credentials: { secret: SECRET } })),
      ];
      const logFrom = rig.nodeRed.log.length;
      should(await rig.deploy(flows)).be.within(200, 299);
      should(await rig.statusOf('second-hook')).match({ fill: 'red', text: 'path in use by Hook A' });
      const lines = rig.logSince(logFrom).filter((line) => line.includes('[svc-webhook-in:second-hook]'));
      should(lines).have.length(1);
      should(lines[0]).containEql('not listening: POST /same-path is already received by "Hook A" (svc-webhook-in) on tab "Webhooks"');
    });

    it('serves POST /hook#frag and an absolute-form target like the plain path', async function () {
      should(await rig.deploy(flow(rig, [{ id: 'targets', url: '/targets' }]))).be.within(200, 299);
      const send = (target: string, nonce: number) => {
        const body = Buffer.from(`{"nonce":${nonce}}`);
        const head = `POST ${target} HTTP/1.1\nhost: 127.0.0.1\ncontent-type: application/json\nsvc-signature: ${signatureHeader(nowSec(), SECRET, body)}\ncontent-length: ${body.length}\nconnection: close\n\n`;
        return rawRequest(rig.nodeRed.port, head, body);
      };
      should((await send('/targets#frag', 1)).status).equal(200);
      should((await send(`http://127.0.0.1:${rig.nodeRed.port}/targets`, 2)).status).equal(200);
      should((await send(`http://127.0.0.1:${rig.nodeRed.port}/targets?x=1#frag`, 3)).status).equal(200);
      await rig.reports((r) => r.kind === 'message' && r.source === 'targets', 3);
      should(rig.messagesOf('targets').map((m) => m.payload)).eql([{ nonce: 1 }, { nonce: 2 }, { nonce: 3 }]);
    });

    it('responds with 2xx only with a message sent: too deep, not UTF-8, invalid and oversized bodies get a 4xx with a reason; a leading BOM is accepted', async function () {
      should(await rig.deploy(flow(rig, [{ id: 'bodies', url: '/bodies', maxBodyKb: 256 }]))).be.within(200, 299);
      const cases: Array<[string, Buffer, number, string]> = [
        ['nested 100,000 deep', Buffer.from(`${'['.repeat(100_000)}${']'.repeat(100_000)}`), 400, 'too deep'],
        ['nested 129 deep', Buffer.from(`${'{"a":'.repeat(129)}1${'}'.repeat(129)}`), 400, 'too deep'],
        ['invalid UTF-8 in a string', Buffer.concat([Buffer.from('{"bad":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]), 400, 'invalid JSON'],
        ['two JSON texts', Buffer.from('{"a":1}{"b":2}'), 400, 'invalid JSON'],
        ['over the size limit', Buffer.from(JSON.stringify({ blob: 'x'.repeat(300 * 1024) })), 413, 'body too large'],
      ];
      for (const [name, body, status, reason] of cases) {
        const res = await postSigned(rig.nodeRed, '/bodies', body, SECRET);
        should(res.status).equal(status, name);
        should(JSON.parse(res.text)).eql({ error: reason }, name);
      }
      const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"bom":true}')]);
      should((await postSigned(rig.nodeRed, '/bodies', withBom, SECRET)).status).equal(200);
      const deepest = `${'{"a":'.repeat(128)}1${'}'.repeat(128)}`;
      should((await postSigned(rig.nodeRed, '/bodies', deepest, SECRET)).status).equal(200);
      await rig.reports((r) => r.kind === 'message' && r.source === 'bodies', 2);
      should(rig.messagesOf('bodies')).have.length(2);
      should(rig.messagesOf('bodies')[0].payload).eql({ bom: true });
    });

    it('gives a length-extended body the same response whatever secret length is guessed', async function () {
      should(await rig.deploy(flow(rig, [{ id: 'oracle', url: '/oracle' }]))).be.within(200, 299);
      const t = nowSec();
      const body = Buffer.from('{"reading":1}');
      const digest = webhookDigest(t, SECRET, body);
      const suffix = Buffer.from(',"reading":999}');
      const responses = new Set<string>();
      for (let guessed = SECRET.length - 6; guessed <= SECRET.length + 6; guessed++) {
        const length = `${t}.`.length + guessed + 1 + body.length;
        const forged = Buffer.concat([body, sha256Padding(length), suffix]);
        const res = await rig.nodeRed.request('/oracle', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'svc-signature': `t=${t},digestV1=${extendSha256(digest, length, suffix)}` },
          body: new Uint8Array(forged),
        });
        responses.add(`${res.status} ${await res.text()}`);
      }
      should([...responses]).eql(['400 {"error":"invalid JSON"}']);
      should(rig.messagesOf('oracle')).have.length(0);
    });

    it('refuses a replay after a full redeploy, after a secret rotation and after a restart (SIGKILL)', async function () {
      const hook = { id: 'replays', url: '/replays' };
      should(await rig.deploy(flow(rig, [hook]))).be.within(200, 299);
      const t = nowSec();
      const body = '{"event":"once"}';
      should((await postSigned(rig.nodeRed, '/replays', body, SECRET, t)).status).equal(200);
      should(await rig.deploy(flow(rig, [hook]))).be.within(200, 299);
      should(await postSigned(rig.nodeRed, '/replays', body, SECRET, t)).eql({ status: 401, text: '{"error":"replay"}' });
      // A rotation: the old secret becomes the previous one.
      should(await rig.deploy(flow(rig, [hook], [], { secret: 'rotated-secret', previousSecret: SECRET }))).be.within(200, 299);
      should(await postSigned(rig.nodeRed, '/replays', body, SECRET, t)).eql({ status: 401, text: '{"error":"replay"}' });
      await rig.killAndRestart();
      should(await postSigned(rig.nodeRed, '/replays', body, SECRET, t)).eql({ status: 401, text: '{"error":"replay"}' });
      // A new request still passes, and the same event sent to another path with the same secret is that path's own.
      should((await postSigned(rig.nodeRed, '/replays', '{"event":"twice"}', SECRET, t)).status).equal(200);
      should(await rig.deploy(flow(rig, [hook, { id: 'replays-b', url: '/replays-b' }], [], { secret: SECRET }))).be.within(200, 299);
      should((await postSigned(rig.nodeRed, '/replays-b', body, SECRET, t)).status).equal(200);
      should((await postSigned(rig.nodeRed, '/replays-b', body, SECRET, t)).status).equal(401);
    });

    it('one window rule at its edge: a replay hammered across t + tolerance is refused as a replay, then as stale, never accepted', async function () {
      should(await rig.deploy(flow(rig, [{ id: 'edge', url: '/edge', tolerance: 1 }]))).be.within(200, 299);
      const t = String(Date.now());
      const body = '{"edge":true}';
      should((await postSigned(rig.nodeRed, '/edge', body, SECRET, t)).status).equal(200);
      // One request after another from 80 ms before the window's last millisecond to 80 ms after it.
      // (The old code's gap was that one millisecond: the exact edge is shown on a fixed clock in signature_spec.)
      await new Promise((resolve) => setTimeout(resolve, Number(t) + 1000 - 80 - Date.now()));
      const kinds: string[] = [];
      while (Date.now() <= Number(t) + 1000 + 80) {
        const { text } = await postSigned(rig.nodeRed, '/edge', body, SECRET, t);
        kinds.push(text === '' ? 'accepted' : (JSON.parse(text) as { error: string }).error);
      }
      should(kinds).not.containEql('accepted');
      const firstStale = kinds.indexOf('stale timestamp');
      should(firstStale).be.above(0);
      should(kinds.slice(0, firstStale).every((kind) => kind === 'replay')).be.true();
      should(kinds.slice(firstStale).every((kind) => kind === 'stale timestamp')).be.true();
      should(rig.messagesOf('edge')).have.length(1);
    });

    it('logs failed requests from anyone at most once a minute per node, with their count', async function () {
      should(await rig.deploy(flow(rig, [{ id: 'noise', url: '/noise' }]))).be.within(200, 299);
      const logFrom = rig.nodeRed.log.length;
      const body = Buffer.from('{"upload":"never finished"}');
      for (let i = 0; i < 20; i++) {
        await new Promise<void>((resolve) => {
          const head = `POST /noise HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nsvc-signature: ${signatureHeader(nowSec(), SECRET, body)}\r\ncontent-length: ${body.length}\r\n\r\n`;
          const socket = net.connect(rig.nodeRed.port, '127.0.0.1', () => {
            socket.write(head + body.subarray(0, 5).toString());
            setTimeout(() => socket.destroy(), 20);
          });
          socket.on('error', () => undefined);
          socket.on('close', () => resolve());
        });
      }
      // Still responding, and one line for the 20.
      should((await postSigned(rig.nodeRed, '/noise', '{"after":true}', SECRET)).status).equal(200);
      // The first failure is logged at once, the other 19 not within the minute.
      const noise = () => rig.logSince(logFrom).filter((line) => line.includes('[svc-webhook-in:noise]'));
      await waitUntil(() => noise().length > 0, 'the failed requests to be logged');
      const lines = noise();
      should(lines).have.length(1);
      should(lines[0]).match(/\[warn\].*1 request\(s\) failed \(last: .+\); failed requests are counted and logged at most once a minute/);
    });
  });

  describe('with the editor at /admin and the nodes at "/"', function () {
    const rig = new WebhookRig({ httpAdminRoot: '/admin', httpNodeRoot: '/' });
    before(async function () {
      await rig.start();
    });
    after(async function () {
      await rig.stop();
    });

    it('refuses /admin/flows at deploy, keeps deploys working, and serves /flows, which the editor does not serve here', async function () {
      const logFrom = rig.nodeRed.log.length;
      should(
        await rig.deploy(
          flow(rig, [
            { id: 'admin-flows', url: '/admin/flows' },
            { id: 'plain-flows', url: '/flows' },
          ]),
        ),
      ).be.within(200, 299);
      should(await rig.statusOf('admin-flows')).match({ fill: 'red', text: 'editor path /admin/flows' });
      const lines = rig.logSince(logFrom).filter((line) => line.includes('[svc-webhook-in:admin-flows]'));
      should(lines).have.length(1);
      should(lines[0]).containEql("not listening: POST /admin/flows is a path of Node-RED's editor (httpAdminRoot /admin/)");
      should(await rig.statusOf('plain-flows')).match({ fill: 'green', text: 'listening' });
      should((await postSigned(rig.nodeRed, '/flows', '{"served":true}', SECRET)).status).equal(200);
      should(await rig.deploy(flow(rig, [{ id: 'admin-flows', url: '/admin/flows' }]))).be.within(200, 299);
      await rig.killAndRestart();
      should(await rig.deploy(flow(rig, []))).be.within(200, 299);
    });
  });
});
