import fs from 'node:fs';
import path from 'node:path';
import should from 'should';
import { Fields, WebhookRig, reportingTab } from '../support/webhook-process';
import { runtimeUnderTest } from '../support/node-red-process';
import { REPO_ROOT } from '../support/paths';
import { waitUntil } from '../support/wait';

/**
 * The built-in sandbox (issue 52): a config node with platform 'sandbox' and nothing typed, in a real
 * Node-RED process, geocodes, subscribes this Node-RED's own webhook receiver and receives the signed
 * webhook, against the sandbox this Node-RED serves at /svc-sandbox. Its credentials are made once per
 * user directory (0600) and kept; its routes respond only while a sandbox config is deployed.
 */

const TAB = { id: 'tab-builtin', label: 'Built-in sandbox' };

/** An example flow with its debug nodes turned into taggers that report what reaches them. */
function example(file: string): Fields[] {
  const nodes = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'examples', file), 'utf8')) as Fields[];
  return nodes.map((node) =>
    node.type === 'debug'
      ? { id: node.id, type: 'change', rules: [{ t: 'set', p: '_source', pt: 'msg', to: String(node.id), tot: 'str' }], x: node.x, y: node.y }
      : node,
  );
}

/** The geocode and webhook round-trip examples on one reporting tab, as imported (the shared config node once). */
function examplesFlow(rig: WebhookRig): Fields[] {
  const nodes = [...example('geocode-an-address.json'), ...example('webhook-round-trip.json').filter((node) => node.id !== 'svc-sandbox')];
  const config = nodes.filter((node) => node.type === 'svc-config');
  return [
    ...reportingTab(
      TAB,
      rig.collector.url,
      nodes.filter((node) => node.type !== 'svc-config'),
    ),
    ...config,
  ];
}

describe(`the built-in sandbox in a real ${runtimeUnderTest().title}`, function () {
  this.timeout(120_000);
  const rig = new WebhookRig({});
  const credentialsFile = () => path.join(rig.userDir, 'svc-location', 'sandbox.json');
  const clicked = async (id: string) => {
    const res = await rig.nodeRed.request(`/inject/${id}`, { method: 'POST' });
    should(res.status).equal(200, `inject ${id}`);
  };
  const shown = (source: string, count = 1) => rig.reports((report) => report.kind === 'message' && report.source === source, count, 20_000);

  before(async function () {
    await rig.start();
  });
  after(async function () {
    await rig.stop();
  });

  it('geocodes, subscribes this Node-RED and receives the signed webhook with nothing typed', async function () {
    should(await rig.deploy(examplesFlow(rig))).equal(204);
    await clicked('ex-geocode-inject');
    const [geocoded] = await shown('ex-geocode-debug');
    should((geocoded.payload as Fields).lat).be.a.Number();

    await clicked('ex-roundtrip-start');
    await shown('ex-roundtrip-subscribed');
    await clicked('ex-roundtrip-publish');
    const [received] = await shown('ex-roundtrip-received');
    should(received.payload).match({ data: { temperature: 21.5 } });
    should(rig.nodeRed.problems().filter((line) => /svc-|sandbox/i.test(line))).deepEqual([]);
    // The example's address is a path: the delivery went to this Node-RED's own port, and the log says so (issue 54).
    should(rig.nodeRed.port).not.equal(1880);
    const delivered = new RegExp(
      `\\[info\\] \\[svc-location\\] the built-in sandbox delivered a webhook: webhook delivery [0-9a-f-]{36} to http://127\\.0\\.0\\.1:${rig.nodeRed.port}/svc-round-trip \\(subscription \\d+\\), attempt 1 of 5 delivered: responded 200`,
    );
    await waitUntil(() => rig.nodeRed.log.some((line) => delivered.test(line)), `the delivery in the log:\n${rig.nodeRed.log.join('\n')}`, 5_000);
  });

  it('says in Test connection that it is the built-in sandbox, not the platform', async function () {
    const res = await rig.nodeRed.request('/svc-config/test', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'svc-sandbox', platform: 'sandbox', credentials: {} }),
    });
    const reply = (await res.json()) as { ok: boolean; message: string };
    should(reply.ok).be.true(reply.message);
    should(reply.message).match(/^built-in sandbox, not the platform: /);
  });

  it('makes its credentials once per user directory (0600), never in the flow, and keeps them across a restart', async function () {
    const first = fs.readFileSync(credentialsFile(), 'utf8');
    should(fs.statSync(credentialsFile()).mode & 0o777).equal(0o600);
    const kept = JSON.parse(first) as Fields;
    const flowFiles = ['flows.json', 'flows_cred.json'].map((name) => path.join(rig.userDir, name)).filter((file) => fs.existsSync(file));
    const flows = flowFiles.map((file) => fs.readFileSync(file, 'utf8')).join('\n');
    for (const secret of ['clientSecret', 'apiKey', 'pubsubApiKey', 'webhookSecret']) should(flows.includes(String(kept[secret]))).be.false(secret);
    should(rig.nodeRed.log.join('\n').includes(String(kept.apiKey))).be.false();

    await rig.nodeRed.stop(10_000);
    await rig.start();
    should(fs.readFileSync(credentialsFile(), 'utf8')).equal(first);
    const before = rig.collector.reports.length;
    await clicked('ex-geocode-inject');
    await waitUntil(() => rig.collector.reports.slice(before).some((r) => r.source === 'ex-geocode-debug'), 'a geocode after the restart', 20_000);
  });

  it('responds at /svc-sandbox only while a sandbox config is deployed', async function () {
    // A JSON body, which Node-RED's editor API would parse in front of RED.httpNode: the sandbox reads it itself.
    const probe = () =>
      rig.nodeRed.request('/svc-sandbox/v1/geocode', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ q: 'x' }) });
    const served = await probe();
    should(served.status).equal(401);
    should(await served.json()).match({ error: 'unauthorized' });

    should(await rig.deploy([{ id: TAB.id, type: 'tab', label: TAB.label }])).equal(204);
    should((await probe()).status).equal(404);

    should(await rig.deploy(examplesFlow(rig))).equal(204);
    should((await probe()).status).equal(401);
  });
});
