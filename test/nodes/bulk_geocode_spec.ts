import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import should from 'should';
import { expectError, expectOutput, helper, loadWithSandbox, sendAndWait, storedJobStore, useSandbox, Fields, Sandbox } from '../support/harness';
import { expectHandlesBackTo, handleBaseline } from '../support/handles';
import { waitUntil } from '../support/wait';
import { bulkControls, bulkJobs, resetBulk } from '../../sandbox/endpoints/bulk';
import { geocode } from '../../sandbox/endpoints/geocode';
import type { BulkRow } from '../../nodes/lib/geo/result-rows';
import type { JobReport } from '../../nodes/lib/platform/bulk-run';

/** Fast polling so that jobs of a few polls finish in well under a second. */
const FAST = { pollInterval: 10, maxWait: 5 };

describe('svc-bulk-geocode', function () {
  const JOB_POLLS = 3;
  const ctx = useSandbox({ jobPolls: JOB_POLLS });
  beforeEach(() => resetBulk(ctx.sandbox));

  const load = (extra: Fields = {}, config: Fields = {}, credentials: Fields = {}) =>
    loadWithSandbox(ctx.sandbox, {
      types: ['svc-bulk-geocode'],
      nodes: [{ id: 'n1', type: 'svc-bulk-geocode', ...FAST, ...extra }],
      config,
      credentials,
    });
  const rowsOf = (msg: Fields) => msg.payload as BulkRow[];
  const uploads = () => [...bulkJobs(ctx.sandbox).values()].map((job) => job.addresses);
  /** Where the sandbox geocoder puts an address, as `{ lat, lon }`. */
  const expectedLocation = (address: string) => {
    const [lon, lat] = (geocode(address)?.geometry as { coordinates: [number, number] }).coordinates;
    return { lat, lon };
  };

  describe('the three steps', function () {
    it('uploads a CSV, polls the job, downloads the results and outputs one row per address', async function () {
      await load();
      const addresses = ['12 Main Street, Sandbox City', 'nowhere at all', 'High Street'];
      const msg = await expectOutput('n1', { payload: addresses });
      const rows = rowsOf(msg);
      should(rows.map((row) => row.index)).eql([0, 1, 2]);
      should(rows.map((row) => row.input)).eql(addresses);
      should(rows[0].location).eql(expectedLocation(addresses[0]));
      should(rows[0].error).be.undefined();
      should(rows[0].result).have.properties({ address: addresses[0], match_type: 'exact', accuracy: 'Point' });
      should(rows[1].location).be.undefined();
      should(rows[1].error).equal('no match');
      should(rows[2].location).eql(expectedLocation(addresses[2]));
      const jobs = msg.jobs as JobReport[];
      should(jobs).have.length(1);
      should(jobs[0]).have.properties({ batch: 0, rows: 3, firstIndex: 0, lastIndex: 2, polls: 3 });
      should(jobs[0].jobId).equal([...bulkJobs(ctx.sandbox).keys()][0]);
      should(Date.parse(jobs[0].finishedAt)).be.aboveOrEqual(Date.parse(jobs[0].startedAt));
      should(jobs[0].durationMs).be.aboveOrEqual(0);
      should(msg.files).be.undefined();
      // The bulk outputs carry the status of the response they come from, as every other node's (issue 28).
      should(msg.statusCode).equal(200);

      const [upload] = ctx.sandbox.requests('bulk-upload');
      should(upload.method).equal('POST');
      should(upload.status).equal(201);
      should(upload.headers['content-type']).startWith('multipart/form-data');
      should(upload.headers['x-svc-project-id']).equal('sandbox-project');
      should(upload.headers['x-svc-api-key']).equal('sandbox-api-key');
      should(uploads()).eql([addresses]);
      const polls = ctx.sandbox.requests('bulk-status');
      should(polls).have.length(3);
      should(polls.map((r) => r.method)).matchEach('GET');
      should(polls.map((r) => r.path)).matchEach(`/v1/geocode/bulk/${jobs[0].jobId}`);
      const [download] = ctx.sandbox.requests('bulk-download');
      should(download.status).equal(200);
      should(download.query.token).match(/\+/).and.match(/\//).and.match(/=/);
    });

    it('accepts an upload whose response is another 2xx than the 201 of the spec, with one warning for all its jobs (issue 28)', async function () {
      await load({ batchSize: 2 });
      bulkControls(ctx.sandbox).uploadStatus = 202;
      const msg = await expectOutput('n1', { payload: ['1 Main Street', '2 Main Street', '3 Main Street'] });
      should(rowsOf(msg).map((row) => row.error)).eql([undefined, undefined, undefined]);
      should(ctx.sandbox.requests('bulk-upload').map((r) => r.status)).eql([202, 202]);
      await expectOutput('n1', { payload: ['4 Main Street'] });
      const warnings = (helper.getNode('n1').warn as { args: unknown[][] }).args.map((args) => String(args[0]));
      should(warnings).eql([
        'a bulk upload was accepted with status 202, not the 201 the platform documents: its job is run as usual (warned once until the node is redeployed)',
      ]);
    });

    it('writes addresses with commas, quotes, line breaks and Unicode so that they arrive intact', async function () {
      await load();
      const addresses = ['1 Main Street, Sandbox City', 'the "Old Mill", Station Road', 'Flat 2\nChurch Lane', 'Straße 5, Köln', '東京都港区芝公園4-2-8'];
      const msg = await expectOutput('n1', { payload: addresses });
      should(uploads()).eql([addresses]);
      should(rowsOf(msg).map((row) => (row.result as Fields).address)).eql(addresses);
    });

    it('shows rows and jobs done in the status while the jobs run', async function () {
      await load({ batchSize: 2, parallel: 1 });
      const texts: string[] = [];
      helper.getNode('n1').on('call:status', (call: { args: Array<{ text?: string }> }) => texts.push(call.args[0].text ?? ''));
      await expectOutput('n1', { payload: ['Main Street', 'High Street', 'Station Road'] });
      await new Promise((resolve) => setImmediate(resolve));
      should(texts).containEql('0/2+ rows, 0/1+ jobs');
      should(texts).containEql('2/3 rows, 1/2 jobs');
      should(texts[texts.length - 1]).equal('3 rows');
    });

    it('shows every run while several run at once, each with its own progress or outcome (issue 29 point 6)', async function () {
      await load({ batchSize: 2, parallel: 1 });
      const texts: string[] = [];
      helper.getNode('n1').on('call:status', (call: { args: Array<{ text?: string }> }) => texts.push(call.args[0].text ?? ''));
      const outputs: Fields[] = [];
      helper.getNode('n1').on('call:send', (call: { args: Fields[] }) => outputs.push(call.args[0]));
      helper.getNode('n1').receive({ payload: ['Main Street', 'High Street', 'Station Road', 'Market Square', 'Church Lane', 'Main Street 2'] });
      helper.getNode('n1').receive({ payload: ['High Street', 'nowhere at all'] });
      await waitUntil(() => outputs.length === 2, 'both runs to end', 10_000);
      await new Promise((resolve) => setImmediate(resolve));
      const both = texts.filter((text) => text.startsWith('2 runs: '));
      should(both.length).be.above(0);
      should(both.some((text) => /^2 runs: \d\/\d\+? rows, \d\/\d\+? jobs; /.test(text))).be.true(both.join(' | '));
      // The run that ends first is shown with its outcome beside the other's progress, and the last status lists both outcomes.
      should(texts[texts.length - 1]).match(/^2 runs: (6 rows; 2 rows, 1 not geocoded|2 rows, 1 not geocoded; 6 rows)$/);
    });
  });

  describe('inputs', function () {
    it('takes an array of objects with an address member and keeps the other members', async function () {
      await load();
      const input = [
        { id: 7, address: 'Main Street', tag: 'a' },
        { id: 8, address: 'High Street' },
      ];
      const msg = await expectOutput('n1', { payload: input });
      should(rowsOf(msg).map((row) => row.input)).eql(input);
      should(uploads()).eql([['Main Street', 'High Street']]);
    });

    it('takes CSV text with an address column and keeps the other columns', async function () {
      await load();
      const csv = 'id,Address,note\r\n1,"12 Main Street, Sandbox City","said ""hi"""\r\n2,High Street,\r\n';
      const msg = await expectOutput('n1', { payload: csv });
      should(rowsOf(msg).map((row) => row.input)).eql([
        { id: '1', Address: '12 Main Street, Sandbox City', note: 'said "hi"' },
        { id: '2', Address: 'High Street', note: '' },
      ]);
      should(uploads()).eql([['12 Main Street, Sandbox City', 'High Street']]);
    });

    it('takes a CSV Buffer in UTF-8', async function () {
      await load();
      const msg = await expectOutput('n1', { payload: Buffer.from('\uFEFFaddress,city\nStraße 5,Köln\n', 'utf8') });
      should(rowsOf(msg)[0].input).eql({ address: 'Straße 5', city: 'Köln' });
      should(uploads()).eql([['Straße 5']]);
    });

    it('reads a stream of CSV bytes split anywhere', async function () {
      await load();
      const bytes = Buffer.from('address,n\n"Main Street, Sandbox City",1\nКрасная площадь,2\n', 'utf8');
      const chunks = [];
      for (let i = 0; i < bytes.length; i += 3) chunks.push(bytes.subarray(i, i + 3));
      const msg = await expectOutput('n1', { payload: Readable.from(chunks, { objectMode: false }) });
      should(rowsOf(msg).map((row) => row.input)).eql([
        { address: 'Main Street, Sandbox City', n: '1' },
        { address: 'Красная площадь', n: '2' },
      ]);
    });

    it('reads an object-mode stream of strings and objects', async function () {
      await load();
      const msg = await expectOutput('n1', { payload: Readable.from(['Main Street', { address: 'High Street', id: 2 }]) });
      should(rowsOf(msg).map((row) => row.input)).eql(['Main Street', { address: 'High Street', id: 2 }]);
    });

    it('uses a fixed list from the editor in place of the message', async function () {
      await load({ addresses: '["Main Street"]', addressesType: 'json' });
      const msg = await expectOutput('n1', { payload: ['ignored'] });
      should(rowsOf(msg).map((row) => row.input)).eql(['Main Street']);
    });

    it('turns empty addresses into error rows without sending them', async function () {
      await load();
      const msg = await expectOutput('n1', { payload: ['Main Street', '  ', { address: '' }, 'High Street'] });
      const rows = rowsOf(msg);
      should(rows.map((row) => row.index)).eql([0, 1, 2, 3]);
      should(rows[1].error).match(/empty/);
      should(rows[2].error).match(/empty/);
      should(rows[3].location).eql(expectedLocation('High Street'));
      should(uploads()).eql([['Main Street', 'High Street']]);
    });

    it('refuses empty and malformed input before any request, keeping the message', async function () {
      await load();
      const bad: unknown[] = [
        [],
        '',
        '  \n',
        Buffer.alloc(0),
        42,
        null,
        { address: 'Main Street' },
        ['Main Street', 7],
        [{ name: 'no address member' }],
        'name,city\nx,y\n',
        'address\n"unterminated\n',
        'address\n',
        ['', '  '],
      ];
      for (const payload of bad) {
        const { error, msg } = await expectError('n1', { payload });
        should(error.code).equal('INVALID_INPUT', `for ${JSON.stringify(payload)}`);
        should(msg.payload).eql(payload);
      }
      should(ctx.sandbox.log).have.length(0);
    });

    it('refuses a stream with a bad row or a read error', async function () {
      await load();
      const failing = new Readable({
        read() {
          this.destroy(new Error('disk gone'));
        },
      });
      for (const payload of [Readable.from(['Main Street', 42]), failing, Readable.from([])]) {
        const { error } = await expectError('n1', { payload });
        should(error.code).equal('INVALID_INPUT');
      }
      should(ctx.sandbox.log).have.length(0);
    });
  });

  describe('batches', function () {
    it('splits the input into batches, runs them in parallel and merges the results in input order', async function () {
      await load({ batchSize: 3, parallel: 2 });
      bulkControls(ctx.sandbox).resultOrder = 'reversed';
      const addresses = ['1 Main Street', '2 Main Street', 'nowhere 3', '4 High Street', '5 High Street', 'Station Road', 'Church Lane'];
      const msg = await expectOutput('n1', { payload: addresses });
      const rows = rowsOf(msg);
      should(rows.map((row) => row.index)).eql([0, 1, 2, 3, 4, 5, 6]);
      should(rows.map((row) => row.input)).eql(addresses);
      rows.forEach((row, i) => {
        if (i === 2) should(row.error).equal('no match');
        else should(row.location).eql(expectedLocation(addresses[i]));
      });
      should(uploads()).eql([addresses.slice(0, 3), addresses.slice(3, 6), addresses.slice(6)]);
      const jobs = msg.jobs as JobReport[];
      should(jobs.map((job) => [job.batch, job.rows, job.firstIndex, job.lastIndex])).eql([
        [0, 3, 0, 2],
        [1, 3, 3, 5],
        [2, 1, 6, 6],
      ]);
      should(maxJobsAtOnce(ctx.sandbox)).equal(2);
    });

    it('after a crash, uploads again a batch whose upload was under way without a job id stored, and says so in its report', async function () {
      const addresses = ['1 Main Street', '2 Main Street', '3 High Street', '4 High Street'];
      // As a crash leaves it: batch 1's upload was sent (stored as under way), its response never stored; batch 0 not started.
      const run = { batchSize: 2, rows: addresses.map((address, index) => ({ index, input: address, address })), jobs: [], uploading: [1] };
      await storedJobStore().put(
        { key: 'crashed-run', nodeId: 'n1', kind: 'bulk-geocode', job: run, msg: { tag: 'before the crash' }, startedAt: new Date().toISOString() },
        'the crashed process',
        10_000,
      );
      await load({ parallel: 1 });
      // The resumed run has an upload, polls and a download ahead of it: it cannot end before this listens.
      const msg = await new Promise<Fields>((resolve) => helper.getNode('out').once('input', resolve));
      should(msg).have.properties({ resumed: true, tag: 'before the crash' });
      should(rowsOf(msg).map((row) => row.input)).eql(addresses);
      should(uploads()).eql([addresses.slice(0, 2), addresses.slice(2)]);
      const jobs = msg.jobs as JobReport[];
      should(jobs.map((job) => job.uploadedAgain)).eql([undefined, true]);
      should(await storedJobStore().list()).eql([]);
    });

    it('runs one job at a time when parallel is 1', async function () {
      await load({ batchSize: 1, parallel: 1 });
      const msg = await expectOutput('n1', { payload: ['Main Street', 'High Street', 'Station Road'] });
      should(msg.jobs).have.length(3);
      should(maxJobsAtOnce(ctx.sandbox)).equal(1);
    });

    it('keeps the input order when a stream is longer than a batch', async function () {
      await load({ batchSize: 2, parallel: 3 });
      const addresses = Array.from({ length: 9 }, (_v, i) => `${i + 1} Main Street`);
      const msg = await expectOutput('n1', { payload: Readable.from(addresses) });
      should(rowsOf(msg).map((row) => row.input)).eql(addresses);
      should(msg.jobs).have.length(5);
    });
  });

  describe('what the spec does not show', function () {
    for (const member of ['id', 'job_id', 'job.id']) {
      it(`finds the job id in the upload response's "${member}"`, async function () {
        await load();
        bulkControls(ctx.sandbox).jobIdMember = member;
        const msg = await expectOutput('n1', { payload: ['Main Street'] });
        should((msg.jobs as JobReport[])[0].jobId).startWith('bulk-');
      });
    }

    it('takes the job id from the Location header when the body has none', async function () {
      await load();
      bulkControls(ctx.sandbox).jobIdMember = '';
      const msg = await expectOutput('n1', { payload: ['Main Street'] });
      should((msg.jobs as JobReport[])[0].jobId).equal([...bulkJobs(ctx.sandbox).keys()][0]);
    });

    it('takes a bare string body as the job id', async function () {
      await load();
      ctx.sandbox.setFault('bulk-upload', { status: 201, body: '"job 7/a"', times: 1 });
      const { error } = await expectError('n1', { payload: ['Main Street'] });
      should(error.code).equal('NOT_FOUND');
      should(ctx.sandbox.requests('bulk-status')[0].path).equal('/v1/geocode/bulk/job%207%2Fa');
    });

    it('says so when it finds no job id, and reads it from the configured path', async function () {
      await load();
      ctx.sandbox.setFault('bulk-upload', { status: 201, body: '{"ticket":{"ref":"t-1"}}', times: 1 });
      const { error } = await expectError('n1', { payload: ['Main Street'] });
      should(error.code).equal('BAD_RESPONSE');
      should(error.message)
        .match(/no job id/)
        .and.match(/Job id path/);
      should(ctx.sandbox.requests('bulk-status')).have.length(0);
      await helper.unload();
      await load({ jobIdPath: 'ticket.ref' });
      ctx.sandbox.setFault('bulk-upload', { status: 201, body: '{"jobId":"guess","ticket":{"ref":"t-1"}}', times: 1 });
      await expectError('n1', { payload: ['Main Street'] });
      should(ctx.sandbox.requests('bulk-status')[0].path).equal('/v1/geocode/bulk/t-1');
      bulkControls(ctx.sandbox).jobIdMember = 'ticket.ref';
      await expectOutput('n1', { payload: ['Main Street'] });
    });

    it('downloads with a bare token from the payload via /v1/download?token=, URL-encoded', async function () {
      await load();
      Object.assign(bulkControls(ctx.sandbox), { downloadAs: 'token', downloadMember: 'payload.token' });
      const msg = await expectOutput('n1', { payload: ['Main Street'] });
      should(rowsOf(msg)[0].location).eql(expectedLocation('Main Street'));
      const [download] = ctx.sandbox.requests('bulk-download');
      should(download.path).equal('/v1/download');
      should(download.headers['x-svc-api-key']).equal('sandbox-api-key');
      // The sandbox refuses a token whose "+", "/" or "=" arrive unencoded.
      should(download.status).equal(200);
      should(download.query.token).match(/[+/=]/);
    });

    it('asks for the result file with accept */*, as a link or a token, in every format the sandbox writes (issue 51 point 9)', async function () {
      // The sandbox responds with 406 to an Accept that does not admit the file's type (application/json for CSV).
      await load();
      for (const [downloadAs, resultFormat] of [
        ['link', 'csv'],
        ['token', 'csv'],
        ['link', 'ndjson'],
        ['token', 'json'],
      ] as const) {
        resetBulk(ctx.sandbox);
        Object.assign(bulkControls(ctx.sandbox), { downloadAs, downloadMember: downloadAs === 'link' ? 'payload.link' : 'payload.token', resultFormat });
        const msg = await expectOutput('n1', { payload: ['Main Street'] });
        should(rowsOf(msg)[0].location).eql(expectedLocation('Main Street'));
        const downloads = ctx.sandbox.requests('bulk-download');
        const download = downloads[downloads.length - 1];
        should(download.headers.accept).equal('*/*', `${downloadAs} ${resultFormat}`);
        should(download.status).equal(200);
      }
    });

    it('reads the link or token from the configured path, and times out without it', async function () {
      Object.assign(bulkControls(ctx.sandbox), { downloadAs: 'token', downloadMember: 'result.fileRef' });
      await load({ maxWait: 0.3 });
      const { error } = await expectError('n1', { payload: ['Main Street'] });
      should(error.code).equal('TIMEOUT');
      should(error.message)
        .match(/no download link or token/)
        .and.match(/last status "completed"/);
      await helper.unload();
      await load({ downloadPath: 'result.fileRef' });
      const msg = await expectOutput('n1', { payload: ['Main Street'] });
      should(rowsOf(msg)[0].location).eql(expectedLocation('Main Street'));
    });

    it('reads a JSON result file', async function () {
      await load();
      bulkControls(ctx.sandbox).resultFormat = 'json';
      const msg = await expectOutput('n1', { payload: ['12 Main Street', 'nowhere'] });
      const rows = rowsOf(msg);
      should(rows[0].location).eql(expectedLocation('12 Main Street'));
      should((rows[0].result as { result: Fields }).result.type).equal('Feature');
      should(rows[1].error).equal('no match');
      should(rows[1].location).be.undefined();
    });

    it('reads a JSON lines result file', async function () {
      await load();
      bulkControls(ctx.sandbox).resultFormat = 'ndjson';
      const msg = await expectOutput('n1', { payload: ['12 Main Street', 'nowhere'] });
      const rows = rowsOf(msg);
      should(rows[0].location).eql(expectedLocation('12 Main Street'));
      should(rows[1].error).equal('no match');
    });

    it('pairs result rows by position when they do not repeat their address', async function () {
      await load();
      for (const resultFormat of ['csv', 'json'] as const) {
        Object.assign(bulkControls(ctx.sandbox), { resultFormat, echoAddress: false });
        const addresses = ['nowhere', '1 Main Street', 'High Street'];
        const msg = await expectOutput('n1', { payload: addresses });
        const rows = rowsOf(msg);
        should(rows[0].error).equal('no match');
        should(rows[1].location).eql(expectedLocation(addresses[1]));
        should(rows[2].location).eql(expectedLocation(addresses[2]));
      }
    });

    it('refuses a result file whose rows cannot be paired with the addresses', async function () {
      await load();
      ctx.sandbox.setFault('bulk-download', { status: 200, body: '[{"lat":1,"lon":2}]', times: 1 });
      const { error } = await expectError('n1', { payload: ['Main Street', 'High Street'] });
      should(error.code).equal('BAD_RESPONSE');
      should(error.message).match(/1 rows for 2 addresses/);
    });

    it('also outputs the raw result files when asked', async function () {
      await load({ rawFiles: true, batchSize: 1 });
      const msg = await expectOutput('n1', { payload: ['Main Street', 'High Street'] });
      const files = msg.files as Buffer[];
      should(files).have.length(2);
      should(Buffer.isBuffer(files[0])).be.true();
      should(files[1].toString('utf8')).startWith('address,latitude,longitude').and.containEql('High Street');
    });

    it('follows a link to another origin without the project headers', async function () {
      const forwarder = await startForwarder(ctx.sandbox);
      try {
        bulkControls(ctx.sandbox).linkOrigin = forwarder.url;
        await load();
        const msg = await expectOutput('n1', { payload: ['Main Street'] });
        should(rowsOf(msg)[0].location).eql(expectedLocation('Main Street'));
        should(forwarder.seen).have.length(1);
        should(forwarder.seen[0]['x-svc-api-key']).be.undefined();
        should(forwarder.seen[0]['x-svc-project-id']).be.undefined();
      } finally {
        await forwarder.close();
      }
    });
  });

  describe('faults', function () {
    it('asks the job for a fresh link once when the download token has expired', async function () {
      await load();
      bulkControls(ctx.sandbox).expiredTokens = 1;
      const msg = await expectOutput('n1', { payload: ['Main Street'] });
      should(rowsOf(msg)[0].location).eql(expectedLocation('Main Street'));
      should(ctx.sandbox.requests('bulk-download').map((r) => r.status)).eql([401, 200]);
      should(ctx.sandbox.requests('bulk-status')).have.length(4);
    });

    it('reports UNAUTHORIZED when the fresh download token is refused too', async function () {
      await load();
      bulkControls(ctx.sandbox).expiredTokens = 2;
      const { error, msg } = await expectError('n1', { payload: ['Main Street'] });
      should(error.code).equal('UNAUTHORIZED');
      should(msg.statusCode).equal(401);
      should(error.message).equal("svc-config 'sandbox': API key refused (401): check the API key and Project id fields");
    });

    it('ends with JOB_FAILED when a job reports a failed status, and stops the other jobs', async function () {
      await load({ batchSize: 1, parallel: 2 });
      bulkControls(ctx.sandbox).outcome = 'fail';
      const { error } = await expectError('n1', { payload: ['Main Street', 'High Street', 'Station Road'] });
      should(error.code).equal('JOB_FAILED');
      should(error.message)
        .match(/failed/)
        .and.match(/the geocoding engine stopped/);
      should(ctx.sandbox.requests('bulk-upload').length).be.belowOrEqual(2);
      should(ctx.sandbox.requests('bulk-download')).have.length(0);
    });

    it('reads the failure from the configured status path only', async function () {
      await load({ statusPath: 'payload.phase', maxWait: 0.3 });
      bulkControls(ctx.sandbox).outcome = 'fail';
      const { error } = await expectError('n1', { payload: ['Main Street'] });
      should(error.code).equal('TIMEOUT');
      should(error.message).match(/no status seen/);
    });

    it('ends with TIMEOUT when a job never finishes within the maximum wait', async function () {
      await load({ maxWait: 0.3 });
      bulkControls(ctx.sandbox).outcome = 'never';
      const { error } = await expectError('n1', { payload: ['Main Street'] });
      should(error.code).equal('TIMEOUT');
      should(error.message).match(/last status "running"/);
      should(ctx.sandbox.requests('bulk-status').length).be.aboveOrEqual(2);
    });

    it('when removed during a job stops polling, leaves no timer or socket and reports the message cancelled', async function () {
      await load();
      bulkControls(ctx.sandbox).outcome = 'never';
      const baseline = await handleBaseline();
      const outcome = sendAndWait('n1', { payload: ['Main Street'] });
      await waitUntil(() => ctx.sandbox.requests('bulk-status').length >= 2, 'the job to be polled');
      const node = helper.getNode('n1') as unknown as { close(removed: boolean): Promise<void> };
      await node.close(true);
      const result = await outcome;
      should(result.kind).equal('error');
      if (result.kind !== 'error') return;
      should(result.error.code).equal('CANCELLED');
      should(result.error.message).match(/cancelled/);
      const polls = ctx.sandbox.requests('bulk-status').length;
      await helper.unload();
      // No timer or socket left: no poll can start any more.
      await expectHandlesBackTo(baseline);
      should(ctx.sandbox.requests('bulk-status')).have.length(polls);
    });

    it('resumes a run in the node that replaces it on a deploy, polling its stored jobs without uploading them again', async function () {
      const addresses = ['1 Main Street', '2 Main Street', '3 Main Street'];
      await load({ batchSize: 1, parallel: 1 });
      const errors: unknown[] = [];
      helper.getNode('n1').on('call:error', (call: { args: unknown[] }) => errors.push(call.args[0]));
      helper.getNode('n1').receive({ payload: addresses, tag: 'run-1' });
      // The first batch done and the second one uploaded (stored before its first poll).
      await waitUntil(() => ctx.sandbox.requests('bulk-status').length >= JOB_POLLS + 1, 'the second job to be polled');
      await helper.unload();
      should(errors).eql([]);
      should(uploads()).have.length(2);
      await load({ batchSize: 1, parallel: 1 });
      const resumed = await new Promise<Fields>((resolve) => helper.getNode('out').once('input', resolve));
      should(resumed).have.properties({ resumed: true, tag: 'run-1' });
      should(rowsOf(resumed).map((row) => [row.index, row.input])).eql(addresses.map((address, i) => [i, address]));
      should(rowsOf(resumed).every((row) => row.location !== undefined)).be.true();
      should(uploads()).eql(addresses.map((address) => [address]));
    });

    it('on close while waiting for more of a stream stops reading it and reports the message cancelled', async function () {
      await load({ batchSize: 2 });
      const stream = new PassThrough();
      stream.write('address\nMain Street\n');
      const outcome = sendAndWait('n1', { payload: stream });
      await waitUntil(() => stream.readableLength === 0, 'the node to read what the stream has so far');
      await (helper.getNode('n1') as unknown as { close(removed: boolean): Promise<void> }).close(false);
      const result = await outcome;
      should(result.kind).equal('error');
      if (result.kind === 'error') should(result.error.code).equal('CANCELLED');
      should(stream.destroyed).be.true();
      should(ctx.sandbox.log).have.length(0);
    });

    it('does not retry an upload that failed with a 5xx (it may have created a job)', async function () {
      await load();
      ctx.sandbox.setFault('bulk-upload', { status: 503 });
      const { error, msg } = await expectError('n1', { payload: ['Main Street'] });
      should(error.code).equal('SERVER');
      should(msg.statusCode).equal(503);
      should(ctx.sandbox.requests('bulk-upload')).have.length(1);
    });

    it('retries an upload refused with 429 after its Retry-After', async function () {
      await load();
      ctx.sandbox.setFault('bulk-upload', { status: 429, retryAfter: '0', times: 1 });
      await expectOutput('n1', { payload: ['Main Street'] });
      should(ctx.sandbox.requests('bulk-upload').map((r) => r.status)).eql([429, 201]);
    });

    it('retries a status poll and a download that failed with 5xx or timed out', async function () {
      await load({}, { timeout: 300 });
      ctx.sandbox.setFault('bulk-status', { hang: true, times: 1 });
      ctx.sandbox.setFault('bulk-download', { status: 502, times: 1 });
      const msg = await expectOutput('n1', { payload: ['Main Street'] });
      should(rowsOf(msg)[0].location).eql(expectedLocation('Main Street'));
      should(ctx.sandbox.requests('bulk-download').map((r) => r.status)).eql([502, 200]);
    });

    it('reports UNAUTHORIZED for a refused API key', async function () {
      await load({}, {}, { apiKey: 'wrong' });
      const { error, msg } = await expectError('n1', { payload: ['Main Street'] });
      should(error.code).equal('UNAUTHORIZED');
      should(msg.statusCode).equal(401);
    });

    it('reports malformed upload and status responses as BAD_RESPONSE', async function () {
      await load();
      for (const endpoint of ['bulk-upload', 'bulk-status']) {
        ctx.sandbox.setFault(endpoint, { malformedJson: true, times: 1 });
        const { error } = await expectError('n1', { payload: ['Main Street'] });
        should(error.code).equal('BAD_RESPONSE', endpoint);
      }
    });

    it('reports an unreadable result file as BAD_RESPONSE', async function () {
      await load();
      ctx.sandbox.setFault('bulk-download', { malformedJson: true, times: 1 });
      const { error } = await expectError('n1', { payload: ['Main Street'] });
      should(error.code).equal('BAD_RESPONSE');
      should(error.message).match(/result file/);
    });
  });
});

/** The most jobs that were uploaded and not yet downloaded at any one time, from the sandbox's log. */
function maxJobsAtOnce(sandbox: Sandbox): number {
  let running = 0;
  let most = 0;
  for (const request of sandbox.requests()) {
    if (request.endpoint === 'bulk-upload') most = Math.max(most, ++running);
    if (request.endpoint === 'bulk-download') running--;
  }
  return most;
}

/** A server on another origin that forwards to the sandbox and records the headers it was sent. */
async function startForwarder(sandbox: Sandbox): Promise<{ url: string; seen: http.IncomingHttpHeaders[]; close(): Promise<void> }> {
  const seen: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers);
    http
      .get(`${sandbox.url}${req.url}`, { agent: false }, (upstream) => {
        res.writeHead(upstream.statusCode ?? 502, { 'content-type': upstream.headers['content-type'] ?? '' });
        upstream.pipe(res);
      })
      .on('error', () => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
