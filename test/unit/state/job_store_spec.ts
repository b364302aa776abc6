import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { FileJobStore, StoredJob, readJobs } from '../../../nodes/lib/state/job-store';
import type { TextLog } from '../../../nodes/lib/util/catalog-text';
import type { JsonObject } from '../../../nodes/lib/util/values';
import { ManualClock } from '../../support/clock';
import { waitUntil, waitUntilAsync } from '../../support/wait';

/** A log that keeps the keys of what it is told. */
function recordingLog(): TextLog & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, warn: (text) => warnings.push(text.key), info: () => undefined };
}

function storedJob(key: string, status = 'queued', polls = 0): StoredJob {
  const state: JsonObject = { kind: 'isoline', jobId: `job-${key}`, statusPath: `/jobs/${key}`, createdAt: 1, polls, status };
  return { key, nodeId: 'n1', kind: 'isoline', job: { output: { mode: 'car' }, state }, msg: { topic: key }, startedAt: '2026-01-01T00:00:00.000Z' };
}

/** The job store's file: an append-only log written in groups, rewritten when it holds twice the live jobs. */
describe('FileJobStore', function () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-job-store-'));
  after(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });
  let count = 0;
  const storeFile = () => path.join(dir, `jobs-${++count}.json`);

  it('writes a thousand submissions with at most one write per 20, and reads them all back', async function () {
    const file = storeFile();
    const store = new FileJobStore(file, recordingLog());
    await Promise.all(Array.from({ length: 1000 }, (_, i) => store.put(storedJob(`k${i}`))));
    should(store.writes).be.belowOrEqual(1000 / 20 + 1);
    should(store.writes).be.above(0);
    const read = readJobs(file, recordingLog());
    should(read.size).equal(1000);
    should(read.get('k999')).eql(storedJob('k999'));
    await store.close();
  });

  it('writes submissions that come one by one at 200 a second at most 20 to a write, and a lone one after 5 ms', async function () {
    const clock = new ManualClock();
    const store = new FileJobStore(storeFile(), recordingLog(), clock);
    const written: string[] = [];
    const acknowledged: Array<Promise<void>> = [];
    const put = (key: string) => acknowledged.push(store.put(storedJob(key)).then(() => void written.push(key)));
    put('lone');
    await clock.advance(5);
    await waitUntil(() => written.length === 1, 'the lone submission acknowledged');
    should(store.writes).equal(1);
    // A second later, 100 submissions 5 ms apart (and 10 ms of real time, for a write the clock starts to end).
    await clock.advance(1000);
    for (let i = 0; i < 100; i++) {
      put(`k${i}`);
      await clock.advance(5);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await waitUntilAsync(
      async () => {
        await clock.advance(5);
        return written.length === 101;
      },
      'every submission acknowledged',
      10_000,
    );
    should(store.writes).be.belowOrEqual(1 + 100 / 20 + 1);
    // Alone again: written after 5 ms, not 100.
    await clock.advance(1000);
    put('lone again');
    await clock.advance(5);
    await waitUntil(() => written.length === 102, 'the next lone submission acknowledged');
    await Promise.all(acknowledged);
    await store.close();
  });

  it('writes nothing for polls that change only the poll count, and one line per job for polls that change the state', async function () {
    const file = storeFile();
    const store = new FileJobStore(file, recordingLog());
    await Promise.all(Array.from({ length: 200 }, (_, i) => store.put(storedJob(`k${i}`))));
    const afterPuts = store.writes;
    for (let poll = 1; poll <= 20; poll++) {
      for (let i = 0; i < 200; i++) await store.update(`k${i}`, storedJob(`k${i}`, 'queued', poll).job);
    }
    await store.flush();
    should(store.writes).equal(afterPuts);
    // The count is in memory, and in the file at the job's next line.
    should((await store.get('k7'))?.job).eql(storedJob('k7', 'queued', 20).job);
    for (let poll = 21; poll <= 40; poll++) {
      for (let i = 0; i < 200; i++) await store.update(`k${i}`, storedJob(`k${i}`, poll % 2 ? 'running' : 'still running', poll).job);
    }
    // Not written at once: within a second, or with the next line.
    should(store.writes).equal(afterPuts);
    await store.put(storedJob('another'));
    should(store.writes - afterPuts).be.belowOrEqual(3);
    should(
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line.includes('"update":"k7"')),
    ).have.length(1);
    should(readJobs(file, recordingLog()).get('k7')?.job).eql(storedJob('k7', 'still running', 40).job);
    // An update that is more than the state is written before it resolves.
    const changed = { ...storedJob('k8', 'running', 41).job, output: { mode: 'truck' } };
    await store.update('k8', changed);
    should(readJobs(file, recordingLog()).get('k8')?.job).eql(changed);
    await store.close();
  });

  it('forgets delivered and cancelled jobs, and keeps the file under twice the live jobs by rewriting it', async function () {
    const file = storeFile();
    const store = new FileJobStore(file, recordingLog());
    for (let round = 0; round < 5; round++) {
      await Promise.all(Array.from({ length: 1000 }, (_, i) => store.put(storedJob(`r${round}-${i}`))));
      await Promise.all(Array.from({ length: 1000 }, (_, i) => (i < 990 ? store.deliver(`r${round}-${i}`) : store.cancel(`r${round}-${i}`))));
    }
    await store.put(storedJob('last'));
    should(await store.deliver('nothing')).be.false();
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
    // Rewritten once over 1,000 lines and twice the one live job; what came after is appended.
    should(lines).be.below(2200);
    should([...readJobs(file, recordingLog()).keys()]).eql(['last']);
    await store.close();
  });

  it('skips a torn last line with one warning and keeps every job before it', async function () {
    const file = storeFile();
    const store = new FileJobStore(file, recordingLog());
    await Promise.all(['a', 'b', 'c'].map((key) => store.put(storedJob(key))));
    fs.appendFileSync(file, JSON.stringify({ put: storedJob('d') }).slice(0, 40));
    const log = recordingLog();
    const reopened = new FileJobStore(file, log);
    should((await reopened.list()).map((job) => job.key)).eql(['a', 'b', 'c']);
    should(log.warnings).eql(['warn.jobStore.linesSkipped']);
    // The next write rewrites the file whole: the torn line is gone.
    await reopened.put(storedJob('e'));
    should([...readJobs(file, log).keys()]).eql(['a', 'b', 'c', 'e']);
    should(log.warnings).have.length(1);
    await Promise.all([store.close(), reopened.close()]);
  });

  it('reads the whole-file store of an earlier release and turns it into a log at the first write', async function () {
    const file = storeFile();
    fs.writeFileSync(file, JSON.stringify({ version: 1, jobs: [storedJob('old1'), storedJob('old2')] }));
    const store = new FileJobStore(file, recordingLog());
    should((await store.list('n1')).map((job) => job.key)).eql(['old1', 'old2']);
    await store.put(storedJob('new'));
    should(fs.readFileSync(file, 'utf8')).not.containEql('"version"');
    should([...readJobs(file, recordingLog()).keys()]).eql(['old1', 'old2', 'new']);
    await store.close();
  });

  it('loses no acknowledged job when the process is killed in the middle of a batch', async function () {
    this.timeout(60_000);
    const storeModule = require.resolve('../../../nodes/lib/state/job-store');
    for (let run = 0; run < 3; run++) {
      const file = storeFile();
      // Submits jobs without end, in bursts, and prints each key once its put resolved (acknowledged).
      const script = `
        const { FileJobStore } = require(${JSON.stringify(storeModule)});
        const store = new FileJobStore(${JSON.stringify(file)}, { warn: () => {}, info: () => {} });
        let i = 0;
        setInterval(() => {
          for (let n = 0; n < 7; n++) {
            const key = 'k' + i++;
            store.put({ key, nodeId: 'n1', kind: 'isoline', job: { state: { polls: 0 } }, msg: { pad: 'x'.repeat(300) }, startedAt: '' })
              .then(() => process.stdout.write(key + '\\n'));
            const done = i - 2;
            if (i % 3 === 0) store.deliver('k' + done).then(() => process.stdout.write('-' + done + '\\n'));
          }
        }, 1);`;
      const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      await waitUntil(() => out.split('\n').length > 300 + run * 500, 'acknowledged jobs', 20_000);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      const lines = out.split('\n');
      const stored = readJobs(file, recordingLog());
      // Every acknowledged job is there but those whose delivery started (every third, which may be remembered or not)...
      const acknowledged = lines.filter((line) => /^k\d+$/.test(line) && Number(line.slice(1)) % 3 !== 1);
      should(acknowledged.length).be.above(100);
      should(acknowledged.filter((key) => !stored.has(key))).eql([]);
      // ...and no job whose delivery was acknowledged.
      should(lines.filter((line) => line.startsWith('-') && stored.has(`k${line.slice(1)}`))).eql([]);
    }
  });
});
