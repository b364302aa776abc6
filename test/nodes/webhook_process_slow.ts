import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import should from 'should';
import { ADMIN_AUTH, Fields, WebhookRig, postSigned, rawRequest, reportingTab, webhookNodes } from '../support/webhook-process';
import { NodeRedProcess, runtimeUnderTest } from '../support/node-red-process';
import { signatureHeader, webhookDigest } from '../bench/webhook-signing';
import { extendSha256, sha256Padding } from '../support/sha256-extension';
import { waitUntil, waitUntilAsync } from '../support/wait';

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
  const flow = (rig: WebhookRig, hooks: Fields[], others: Fields[] = [], secrets: Fields = { secret: SECRET }): Fields[] =>
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

    it('refuses a path that is a route pattern at deploy (red status, one error line, no route): deploys and logins keep working, also after a restart', async function () {
      const patterns = ['/:id', '/*', '/:a/:b', '/hook/:tenant', '/x|', '/(.*)', '/flows*'];
      const hooks = patterns.map((url, i) => ({ id: `pattern-${i}`, url }));
      const logFrom = rig.nodeRed.log.length;
      should(await rig.deploy(flow(rig, [...hooks, { id: 'fixed', url: '/fixed-hook' }]))).be.within(200, 299);
      const working = async () => {
        should((await rig.login()).status).equal(200);
        should(await rig.deploy(flow(rig, [...hooks, { id: 'fixed', url: '/fixed-hook' }]))).be.within(200, 299);
        should((await postSigned(rig.nodeRed, '/fixed-hook', `{"at":${Date.now()}}`, SECRET)).status).equal(200);
        // No route takes the patterns' requests: a path one would have matched finds none.
        should((await postSigned(rig.nodeRed, '/some-id', '{"pattern":true}', SECRET)).status).equal(404);
      };
      await working();
      for (const [i, url] of patterns.entries()) {
        should(await rig.statusOf(`pattern-${i}`)).match({ fill: 'red', text: `route pattern ${url}` });
        const lines = rig.logSince(logFrom).filter((line) => line.includes(`[svc-webhook-in:pattern-${i}]`));
        // One per deploy: the first and the one working() made.
        should(lines).have.length(2);
        should(lines[0]).match(/\[error\].*not listening: \S+ is a route pattern \(.+\), not one fixed path; a subscription sends to one address/);
      }
      // The patterns are in flows.json: a restart starts them again, and refuses them again.
      await rig.killAndRestart();
      await working();
      should(await rig.statusOf('pattern-2')).match({ fill: 'red', text: 'route pattern /:a/:b' });
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

    it('acknowledges a copy without delivering it again after a full redeploy, after a secret rotation and after a restart (SIGKILL)', async function () {
      const hook = { id: 'replays', url: '/replays' };
      should(await rig.deploy(flow(rig, [hook]))).be.within(200, 299);
      const t = nowSec();
      const body = '{"event":"once"}';
      const acknowledged = { status: 200, text: '' };
      should(await postSigned(rig.nodeRed, '/replays', body, SECRET, t)).eql(acknowledged);
      await rig.reports((r) => r.kind === 'message' && r.source === 'replays');
      should(await rig.deploy(flow(rig, [hook]))).be.within(200, 299);
      should(await postSigned(rig.nodeRed, '/replays', body, SECRET, t)).eql(acknowledged);
      // A rotation: the old secret becomes the previous one.
      should(await rig.deploy(flow(rig, [hook], [], { secret: 'rotated-secret', previousSecret: SECRET }))).be.within(200, 299);
      should(await postSigned(rig.nodeRed, '/replays', body, SECRET, t)).eql(acknowledged);
      await rig.killAndRestart();
      should(await postSigned(rig.nodeRed, '/replays', body, SECRET, t)).eql(acknowledged);
      // One byte more is verified as any request: refused.
      const longer = await rig.nodeRed.request('/replays', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'svc-signature': signatureHeader(t, SECRET, Buffer.from(body)) },
        body: `${body} `,
      });
      should({ status: longer.status, text: await longer.text() }).eql({ status: 401, text: '{"error":"signature mismatch"}' });
      // A new request still passes, and the same event sent to another path with the same secret is that path's own.
      should((await postSigned(rig.nodeRed, '/replays', '{"event":"twice"}', SECRET, t)).status).equal(200);
      should(await rig.deploy(flow(rig, [hook, { id: 'replays-b', url: '/replays-b' }], [], { secret: SECRET }))).be.within(200, 299);
      should((await postSigned(rig.nodeRed, '/replays-b', body, SECRET, t)).status).equal(200);
      should((await postSigned(rig.nodeRed, '/replays-b', body, SECRET, t)).status).equal(200);
      await rig.reports((r) => r.kind === 'message' && r.source === 'replays-b');
      await rig.reports((r) => r.kind === 'message' && r.source === 'replays', 2);
      // Settled: nothing more arrives.
      await new Promise((resolve) => setTimeout(resolve, 500));
      should(rig.messagesOf('replays').map((m) => m.payload)).eql([{ event: 'once' }, { event: 'twice' }]);
      should(rig.messagesOf('replays-b').map((m) => m.payload)).eql([{ event: 'once' }]);
    });

    it('never delivers a copy twice whatever changes between the two: tolerance raised (2 -> 60 s, 300 -> 900 s) by a redeploy or across a restart, lowered and raised again, the secret rotated', async function () {
      const windows = ['raised', 'ninefold', 'lowered', 'rotated', 'restarted'];
      let tolerances: Record<string, number> = { raised: 2, ninefold: 300, lowered: 60, rotated: 300, restarted: 2 };
      const deployWindows = async (changes: Record<string, number>, secrets: Fields = { secret: SECRET }) => {
        tolerances = { ...tolerances, ...changes };
        const hooks = windows.map((name) => ({ id: `window-${name}`, url: `/window-${name}`, tolerance: tolerances[name] }));
        should(await rig.deploy(flow(rig, hooks, [], secrets))).be.within(200, 299);
      };
      const bodyOf = (name: string) => `{"window":"${name}"}`;
      const send = (name: string, t: string, secret = SECRET) => postSigned(rig.nodeRed, `/window-${name}`, bodyOf(name), secret, t);
      const sleepUntil = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms - Date.now())));
      /** A copy: acknowledged without a message while its record is held, or refused as stale once the record has let it go; never a new message. */
      const notDeliveredAgain = (response: { status: number; text: string }) =>
        should(['200 ', '401 {"error":"stale timestamp"}']).containEql(`${response.status} ${response.text}`);

      await deployWindows({});
      const now = Date.now();
      // t in milliseconds; the 300 s window's request is 299 s old, so that its window ends a second from now.
      const t: Record<string, string> = {
        raised: String(now),
        ninefold: String(now - 299_000),
        lowered: String(now),
        rotated: String(now),
        restarted: String(now),
      };
      for (const name of windows) should(await send(name, t[name])).eql({ status: 200, text: '' }, name);
      await rig.reports((r) => r.kind === 'message' && String(r.source).startsWith('window-'), windows.length);

      // Redeployed: 2 -> 60 s, 300 -> 900 s, 60 -> 1 s; a new secret, the old one kept as the previous.
      await deployWindows({ raised: 60, ninefold: 900, lowered: 1 }, { secret: 'rotated-secret', previousSecret: SECRET });
      await sleepUntil(Math.max(now + 3000, Number(t.ninefold) + 300_000 + 1000));
      notDeliveredAgain(await send('raised', t.raised));
      notDeliveredAgain(await send('ninefold', t.ninefold));
      // The same event signed again with the new secret is the same request.
      should(await send('rotated', t.rotated, 'rotated-secret')).eql({ status: 200, text: '' });
      should(await send('rotated', t.rotated)).eql({ status: 200, text: '' });
      should(await send('lowered', t.lowered)).eql({ status: 401, text: '{"error":"stale timestamp"}' });
      await deployWindows({ lowered: 60 }, { secret: 'rotated-secret', previousSecret: SECRET });
      notDeliveredAgain(await send('lowered', t.lowered));

      // Restarted (SIGKILL) with 2 s, then 60 s.
      await rig.killAndRestart();
      await deployWindows({ restarted: 60 }, { secret: 'rotated-secret', previousSecret: SECRET });
      for (const name of windows) notDeliveredAgain(await send(name, t[name]));
      await new Promise((resolve) => setTimeout(resolve, 500));
      const delivered = Object.fromEntries(windows.map((name) => [name, rig.messagesOf(`window-${name}`).map((m) => JSON.stringify(m.payload))]));
      should(delivered).eql(Object.fromEntries(windows.map((name) => [name, [bodyOf(name)]])));
    });

    it('one window rule at its edge: a copy hammered across t + tolerance is acknowledged without a message, then refused as stale, never delivered again', async function () {
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
        kinds.push(text === '' ? 'acknowledged' : (JSON.parse(text) as { error: string }).error);
      }
      const firstStale = kinds.indexOf('stale timestamp');
      should(firstStale).be.above(0);
      should(kinds.slice(0, firstStale).every((kind) => kind === 'acknowledged')).be.true();
      should(kinds.slice(firstStale).every((kind) => kind === 'stale timestamp')).be.true();
      await new Promise((resolve) => setTimeout(resolve, 500));
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
      should(lines[0]).match(/\[warn\].*1 request\(s\) failed \(last: .+\); such requests are counted and logged at most once a minute/);
      // Only what happened: no "0 exact duplicate(s)" (issue 54 point 5).
      should(lines[0]).not.match(/duplicate/);
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

    it('refuses /admin/:x and /:x as route patterns; deploys keep working, also after a restart', async function () {
      const hooks = [
        { id: 'admin-pattern', url: '/admin/:x' },
        { id: 'root-pattern', url: '/:x' },
      ];
      should(await rig.deploy(flow(rig, hooks))).be.within(200, 299);
      should(await rig.deploy(flow(rig, hooks))).be.within(200, 299);
      should(await rig.statusOf('admin-pattern')).match({ fill: 'red', text: 'route pattern /admin/:x' });
      should(await rig.statusOf('root-pattern')).match({ fill: 'red', text: 'route pattern /:x' });
      await rig.killAndRestart();
      should(await rig.deploy(flow(rig, hooks))).be.within(200, 299);
      should(await rig.deploy(flow(rig, []))).be.within(200, 299);
    });
  });

  describe('with a replay journal that cannot be written, and two Node-REDs on one user directory', function () {
    const rig = new WebhookRig({});
    const journal = () => path.join(rig.userDir, 'svc-location', 'webhook-replays.jsonl');
    before(async function () {
      await rig.start();
    });
    after(async function () {
      await rig.stop();
    });

    it('responds with 503 and Retry-After, delivering nothing, while its record cannot be written; says so in the status and the log once a minute; recovers by itself', async function () {
      should(await rig.deploy(flow(rig, [{ id: 'durable', url: '/durable' }]))).be.within(200, 299);
      // A directory where the journal file should be: even root cannot write the file (the first write replaces it whole).
      fs.mkdirSync(journal(), { recursive: true });
      const logFrom = rig.nodeRed.log.length;
      const t = nowSec();
      const first = '{"event":"first"}';
      for (const body of [first, '{"event":"second"}', first]) {
        const res = await rig.nodeRed.request('/durable', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'svc-signature': signatureHeader(t, SECRET, Buffer.from(body)) },
          body,
        });
        should(res.status).equal(503);
        should(res.headers.get('retry-after')).equal('5');
        should(await res.json()).eql({ error: 'journal unavailable' });
      }
      should(await rig.statusOf('durable')).match({ fill: 'red', text: 'replay journal not writable: 503 (3)' });
      const warned = () => rig.logSince(logFrom).filter((line) => line.includes('[svc-webhook-in:durable]'));
      should(warned()).have.length(1);
      should(warned()[0]).match(
        /\[warn\].*1 request\(s\) got a 503 response because their delivery could not be recorded in the replay journal \(.*EISDIR.*\)/,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      should(rig.messagesOf('durable')).have.length(0);
      // Repaired: the sender's retry is delivered, once, and the log says so.
      fs.rmSync(journal(), { recursive: true });
      should(await postSigned(rig.nodeRed, '/durable', first, SECRET, t)).eql({ status: 200, text: '' });
      await rig.reports((r) => r.kind === 'message' && r.source === 'durable');
      should(await rig.statusOf('durable')).match({ fill: 'green', text: '1 accepted, 0 refused' });
      await waitUntil(
        () => warned().some((line) => line.includes('the replay journal is written again (3 request(s) got a 503 response meanwhile)')),
        'the recovery line',
      );
      should(fs.readFileSync(journal(), 'utf8')).match(/"\/durable"/);
      // Recorded before the 200: after a SIGKILL the copy is acknowledged, not delivered again.
      await rig.killAndRestart();
      should(await postSigned(rig.nodeRed, '/durable', first, SECRET, t)).eql({ status: 200, text: '' });
      await new Promise((resolve) => setTimeout(resolve, 500));
      should(rig.messagesOf('durable').map((m) => m.payload)).eql([{ event: 'first' }]);
    });

    it('a holder paused (SIGSTOP) until the other Node-RED took its lock over responds to what reached it meanwhile with 503, records nothing; every delivery is delivered once, also after a restart', async function () {
      this.timeout(240_000);
      should(await rig.deploy(flow(rig, [{ id: 'paused', url: '/paused' }]))).be.within(200, 299);
      const first = rig.nodeRed;
      const t = nowSec();
      const events = ['before', 'queued 1', 'queued 2', 'by the second'];
      const bodyOf = (event: string) => JSON.stringify({ event });
      const unavailable = { status: 503, text: '{"error":"journal unavailable"}' };
      should(await postSigned(first, '/paused', bodyOf('before'), SECRET, t)).eql({ status: 200, text: '' });
      const second = await NodeRedProcess.start(rig.userDir, runtimeUnderTest(), 90_000);
      try {
        should(await postSigned(second, '/paused', bodyOf('by the second'), SECRET, t)).eql(unavailable);
        const pid = first.pid ?? 0;
        process.kill(pid, 'SIGSTOP');
        let queued: Array<Promise<{ status: number; text: string }>> = [];
        try {
          // Two deliveries reach the paused holder: they wait in its socket until it runs again (each on a
          // connection of its own: an idle kept-alive one would be closed by the holder's timers as it resumes).
          queued = ['queued 1', 'queued 2'].map((event) => {
            const body = Buffer.from(bodyOf(event));
            const head = `POST /paused HTTP/1.1\nhost: 127.0.0.1\ncontent-type: application/json\nsvc-signature: ${signatureHeader(t, SECRET, body)}\ncontent-length: ${body.length}\nconnection: close\n\n`;
            return rawRequest(first.port, head, body, 180_000);
          });
          // The second takes the lock over once it has gone 30 s without a refresh (it tries at each request).
          await waitUntilAsync(
            async () => {
              await new Promise((resolve) => setTimeout(resolve, 500));
              return (await postSigned(second, '/paused', bodyOf('by the second'), SECRET, t)).status === 200;
            },
            'the second Node-RED to take the journal over',
            120_000,
          );
        } finally {
          process.kill(pid, 'SIGCONT');
        }
        const responses = await Promise.all(queued);
        should(responses.map(({ status, text }) => ({ status, text: text.slice(text.indexOf('\r\n\r\n') + 4) }))).eql([unavailable, unavailable]);
        // Their senders try again: the holder now delivers them, once.
        for (const event of ['queued 1', 'queued 2']) should(await postSigned(second, '/paused', bodyOf(event), SECRET, t)).eql({ status: 200, text: '' });
        should(await postSigned(first, '/paused', bodyOf('queued 1'), SECRET, t)).eql(unavailable);
        await rig.reports((r) => r.kind === 'message' && r.source === 'paused', events.length);
        await first.stop(10_000);
      } finally {
        await second.kill();
      }
      // After a restart on the user directory, every copy is acknowledged and none delivered again.
      await rig.start();
      for (const event of events) should(await postSigned(rig.nodeRed, '/paused', bodyOf(event), SECRET, t)).eql({ status: 200, text: '' }, event);
      await new Promise((resolve) => setTimeout(resolve, 500));
      should(
        rig
          .messagesOf('paused')
          .map((m) => (m.payload as { event: string }).event)
          .sort(),
      ).eql([...events].sort());
    });

    it('a second Node-RED on the same user directory says so at start and responds with 503 until the first stops; then it records, and nothing either accepted is forgotten', async function () {
      should(await rig.deploy(flow(rig, [{ id: 'shared-dir', url: '/shared-dir' }]))).be.within(200, 299);
      const first = rig.nodeRed;
      const t = nowSec();
      const second = await NodeRedProcess.start(rig.userDir, runtimeUnderTest(), 90_000);
      try {
        const atStart = second.log.filter((line) => line.includes('[svc-webhook-in:shared-dir]'));
        should(atStart).have.length(1);
        should(atStart[0]).match(
          new RegExp(
            `\\[warn\\].*POST /shared-dir responds with 503 for now: the replay journal of this user directory is in use by Node-RED process ${first.pid} on `,
          ),
        );
        const byFirst = '{"event":"by the first"}';
        const bySecond = '{"event":"by the second"}';
        should(await postSigned(first, '/shared-dir', byFirst, SECRET, t)).eql({ status: 200, text: '' });
        const refused = await postSigned(second, '/shared-dir', bySecond, SECRET, t);
        should(refused).eql({ status: 503, text: '{"error":"journal unavailable"}' });
        await rig.reports((r) => r.kind === 'message' && r.source === 'shared-dir');
        // The first stops: the second takes the journal over, reading what the first recorded.
        await first.stop(10_000);
        should(await postSigned(second, '/shared-dir', byFirst, SECRET, t)).eql({ status: 200, text: '' });
        should(await postSigned(second, '/shared-dir', bySecond, SECRET, t)).eql({ status: 200, text: '' });
        await rig.reports((r) => r.kind === 'message' && r.source === 'shared-dir', 2);
      } finally {
        await second.kill();
      }
      // Both processes' records survive: after a restart each copy is acknowledged, none delivered again.
      await rig.start();
      for (const body of ['{"event":"by the first"}', '{"event":"by the second"}']) {
        should(await postSigned(rig.nodeRed, '/shared-dir', body, SECRET, t)).eql({ status: 200, text: '' });
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      should(rig.messagesOf('shared-dir').map((m) => m.payload)).eql([{ event: 'by the first' }, { event: 'by the second' }]);
    });
  });
});
