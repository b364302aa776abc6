import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { ThrottledReport } from '../../../nodes/lib/util/async';
import { readJsonText } from '../../../nodes/lib/util/text';
import { ReplayEntry, ReplayFile, ReplayGuard } from '../../../nodes/lib/webhook/replays';
import { compactKey } from '../../../nodes/lib/webhook/replay-memory';
import { ManualClock } from '../../support/clock';

/** The pieces svc-webhook-in guards itself with, on their own (the node is tested in real Node-RED processes too). */
describe('webhook guards', function () {
  describe('ThrottledReport', function () {
    it('reports the first event at once and the rest as one count per interval', async function () {
      const clock = new ManualClock();
      const reports: Array<[number, string]> = [];
      const report = new ThrottledReport<string>((count, last) => reports.push([count, last]), 80, clock);
      report.note('first');
      for (let i = 0; i < 19; i++) report.note(`later ${i}`);
      should(reports).eql([[1, 'first']]);
      await clock.advance(79);
      should(reports).have.length(1);
      await clock.advance(1);
      should(reports).eql([
        [1, 'first'],
        [19, 'later 18'],
      ]);
      // The count was reported just now: the next event waits for the interval to pass again.
      await clock.advance(79);
      report.note('after a quiet interval');
      should(reports).have.length(2);
      await clock.advance(1);
      should(reports).eql([
        [1, 'first'],
        [19, 'later 18'],
        [1, 'after a quiet interval'],
      ]);
      report.close();
      should(clock.pendingTimers).equal(0);
    });
  });

  describe('readJsonText', function () {
    it('reads one JSON text, drops a leading BOM, and refuses invalid UTF-8, trailing data and deep nesting', function () {
      should(readJsonText(Buffer.from('\ufeff{"a":1}'), 8)).eql({ ok: true, value: { a: 1 } });
      should(readJsonText(Buffer.from('{"a":"[[[[{{"}'), 1)).eql({ ok: true, value: { a: '[[[[{{' } });
      should(readJsonText(Buffer.from('{"a":"\\"[["}'), 1)).eql({ ok: true, value: { a: '"[[' } });
      should(readJsonText(Buffer.from('[[1]]'), 1)).eql({ ok: false, reason: 'too deep' });
      should(readJsonText(Buffer.from([0x22, 0xff, 0x22]), 8)).eql({ ok: false, reason: 'invalid JSON' });
      should(readJsonText(Buffer.from('{} {}'), 8)).eql({ ok: false, reason: 'invalid JSON' });
      should(readJsonText(Buffer.from('\ufeff\ufeff{}'), 8)).eql({ ok: false, reason: 'invalid JSON' });
    });
  });

  describe('ReplayFile and ReplayGuard', function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-replays-'));
    after(function () {
      fs.rmSync(dir, { recursive: true, force: true });
    });
    /** The key of the request named `name` (`<t>:<hex digest>`, as the verifier names one). */
    const keyOf = (name: string) => `t:${createHash('sha256').update(name).digest('hex')}`;
    /** An accepted request named `name` with t `t`, in its window for `windowMs`. */
    const entryOf = (name: string, t: number, windowMs = 1000): ReplayEntry => ({
      key: keyOf(name),
      legacyKey: keyOf(`${name}:legacy`),
      timestampMs: t,
      expiresAt: t + windowMs,
    });
    /** The line a journal written whole holds for one bucket of t: its newest t, its last end, its compact keys. */
    const bucketLine = (scope: string, t: number, expiresAt: number, names: string[]) =>
      JSON.stringify({ scope, t, expiresAt, keys: names.map((name) => compactKey(keyOf(name))) });
    /** A `deliver` that counts its calls. */
    const delivery = (result = true) => {
      const calls = { count: 0 };
      return Object.assign(calls, {
        deliver: () => {
          calls.count++;
          return result;
        },
      });
    };

    it('delivers an entry once per path, on disk first; a copy within its window is a duplicate, delivered no more', async function () {
      const file = path.join(dir, 'replays.jsonl');
      const replays = ReplayFile.at(file);
      const now = Date.now();
      const entry = entryOf('t:digest', now);
      const a = new ReplayGuard(replays, '/a');
      const first = delivery();
      should(await a.admit(entry, first.deliver, now)).eql({ outcome: 'delivered' });
      should(first.count).equal(1);
      // The first write writes the journal whole; then each record is a line of its own.
      should(fs.readFileSync(file, 'utf8')).equal(`${bucketLine('/a', now, now + 1000, ['t:digest'])}\n`);
      const copy = delivery();
      should(await a.admit(entry, copy.deliver, now + 1000)).eql({ outcome: 'duplicate' });
      should(copy.count).equal(0);
      should(await new ReplayGuard(replays, '/b').admit(entry, delivery().deliver, now)).eql({ outcome: 'delivered' });
      // Declined (the node closing): forgotten, so the retry is delivered.
      const other = entryOf('t:other', now);
      should(await a.admit(other, delivery(false).deliver, now)).eql({ outcome: 'withdrawn' });
      should(await a.admit(other, delivery().deliver, now)).eql({ outcome: 'delivered' });
      should(fs.readFileSync(file, 'utf8')).equal(
        [
          bucketLine('/a', now, now + 1000, ['t:digest']),
          `["/b","${compactKey(keyOf('t:digest'))}",${now},${now + 1000}]`,
          `["/a","${compactKey(keyOf('t:other'))}",${now},${now + 1000}]`,
          `["/a","${keyOf('t:other')}",0]`,
          `["/a","${compactKey(keyOf('t:other'))}",${now},${now + 1000}]`,
          '',
        ].join('\n'),
      );
      // Read back as a restarted process would (the same file under another name is a new ReplayFile): a torn last line skipped.
      fs.appendFileSync(file, '["/c","t:dig');
      const reopened = ReplayFile.at(`${dir}/../${path.basename(dir)}/replays.jsonl`);
      should(reopened.lookup('/a', entryOf('t:digest', now))).equal('recorded');
      should(reopened.lookup('/b', entryOf('t:digest', now))).equal('recorded');
      should(reopened.lookup('/a', entryOf('t:other', now))).equal('recorded');
      should(reopened.lookup('/c', entryOf('t:digest', now))).equal('absent');
    });

    it("gives a copy that arrives while the original is being written the original's outcome, delivering once", async function () {
      const replays = ReplayFile.at(path.join(dir, 'together.jsonl'));
      const guard = new ReplayGuard(replays, '/together');
      const entry = entryOf('t:together', Date.now());
      const deliveries = delivery();
      const admissions = await Promise.all([1, 2, 3].map(() => guard.admit(entry, deliveries.deliver)));
      should(admissions).eql([{ outcome: 'delivered' }, { outcome: 'duplicate' }, { outcome: 'duplicate' }]);
      should(deliveries.count).equal(1);
    });

    it('delivers nothing it cannot write (a directory where the journal should be), and records again once it can', async function () {
      const file = path.join(dir, 'blocked', 'replays.jsonl');
      fs.mkdirSync(file, { recursive: true });
      const replays = ReplayFile.at(file);
      const guard = new ReplayGuard(replays, '/blocked');
      const entry = entryOf('t:blocked', Date.now(), 60_000);
      const deliveries = delivery();
      const refused = await guard.admit(entry, deliveries.deliver);
      should(refused).match({ outcome: 'unrecorded', problem: 'not written' });
      should((refused as { cause: string }).cause).match(/EISDIR|EEXIST|ENOTEMPTY|directory/i);
      should(deliveries.count).equal(0);
      // Not remembered: the sender's retry is new once the journal can be written.
      fs.rmSync(file, { recursive: true });
      should(await guard.admit(entry, deliveries.deliver)).eql({ outcome: 'delivered' });
      should(deliveries.count).equal(1);
      should(fs.readFileSync(file, 'utf8')).equal(`${bucketLine('/blocked', entry.timestampMs, entry.expiresAt, ['t:blocked'])}\n`);
    });

    it('records nothing while another live process holds the journal, then reads what that process wrote before recording', async function () {
      const file = path.join(dir, 'held.jsonl');
      const now = Date.now();
      // The parent of this process: alive, on this host.
      fs.writeFileSync(`${file}.lock`, JSON.stringify({ pid: process.ppid, host: os.hostname(), token: 'theirs' }));
      const replays = ReplayFile.at(file);
      should(replays.ready()).eql({ problem: 'in use', holder: { pid: process.ppid, host: os.hostname() } });
      const guard = new ReplayGuard(replays, '/held');
      const deliveries = delivery();
      should(await guard.admit(entryOf('t:mine', now, 60_000), deliveries.deliver)).match({ outcome: 'unrecorded', problem: 'in use' });
      should(deliveries.count).equal(0);
      // The other process wrote one entry and stopped (its lock left behind, its pid no longer running).
      fs.writeFileSync(file, `["/held","${keyOf('t:theirs')}",${now},${now + 60_000}]\n`);
      fs.writeFileSync(`${file}.lock`, JSON.stringify({ pid: deadPid(), host: os.hostname(), token: 'theirs' }));
      should(await guard.admit(entryOf('t:theirs', now, 60_000), deliveries.deliver)).eql({ outcome: 'duplicate' });
      should(await guard.admit(entryOf('t:mine', now, 60_000), deliveries.deliver)).eql({ outcome: 'delivered' });
      should(deliveries.count).equal(1);
      // Rewritten whole from both, by the one holder now: one line for their bucket of t.
      should(fs.readFileSync(file, 'utf8')).equal(`${bucketLine('/held', now, now + 60_000, ['t:theirs', 't:mine'])}\n`);
      should(JSON.parse(fs.readFileSync(`${file}.lock`, 'utf8'))).match({ pid: process.pid });
    });

    it('refuses a request at or before the newest t it forgot, whatever window it passes now, also after a restart and a rewrite', async function () {
      const file = path.join(dir, 'since.jsonl');
      const guard = new ReplayGuard(ReplayFile.at(file), '/since');
      const now = Date.now();
      // Accepted under a 1 s window, which has ended by the next request.
      should(await guard.admit(entryOf('t:short', now - 3000), delivery().deliver, now - 3000)).eql({ outcome: 'delivered' });
      should(await guard.admit(entryOf('t:next', now), delivery().deliver, now)).eql({ outcome: 'delivered' });
      // Its copy under a 60 s window (a tolerance raised since), and an older request never seen: neither can be told from a copy.
      const copies = delivery();
      should(await guard.admit(entryOf('t:short', now - 3000, 60_000), copies.deliver, now)).eql({ outcome: 'forgotten' });
      should(await guard.admit(entryOf('t:older', now - 4000, 60_000), copies.deliver, now)).eql({ outcome: 'forgotten' });
      should(copies.count).equal(0);
      should(await guard.admit(entryOf('t:newer', now - 2000, 60_000), delivery().deliver, now)).eql({ outcome: 'delivered' });
      // Restarted (the same file under another name is a new ReplayFile): read back from the lines.
      const reopened = ReplayFile.at(`${dir}/../${path.basename(dir)}/since.jsonl`);
      should(reopened.lookup('/since', entryOf('t:short', now - 3000, 60_000))).equal('forgotten');
      // Taken over, so rewritten whole: the since line carries it.
      should(await new ReplayGuard(reopened, '/since').admit(entryOf('t:after', now), delivery().deliver, now)).eql({ outcome: 'delivered' });
      should(fs.readFileSync(file, 'utf8').split('\n')[0]).equal(`{"scope":"/since","since":${now - 3000}}`);
      should(ReplayFile.at(`${dir}/./since.jsonl`).lookup('/since', entryOf('t:short', now - 3000, 60_000))).equal('forgotten');
    });

    it("reads an earlier version's journal: its (t, digest) keys are copies, and it vouches for its window before now", function () {
      const file = path.join(dir, 'legacy.jsonl');
      const sec = Math.floor(Date.now() / 1000) - 1;
      const hex = (name: string) => createHash('sha256').update(name).digest('hex');
      fs.writeFileSync(file, `["/legacy","${sec}:${hex('digest')}",${sec * 1000 + 300_000}]\n`);
      const replays = ReplayFile.at(file);
      const request = (t: number) => ({
        key: `${t}:${hex('identity')}`,
        legacyKey: `${t}:${hex('digest')}`,
        timestampMs: t * 1000,
        expiresAt: t * 1000 + 900_000,
      });
      should(replays.lookup('/legacy', request(sec))).equal('recorded');
      should(replays.lookup('/legacy', { ...request(sec - 200), legacyKey: hex('other') })).equal('absent');
      should(replays.lookup('/legacy', { ...request(sec - 400), legacyKey: hex('other') })).equal('forgotten');
    });

    it('records and acknowledges nothing once another process has taken its lock over (a holder paused past the lock age)', async function () {
      const file = path.join(dir, 'taken.jsonl');
      const guard = new ReplayGuard(ReplayFile.at(file), '/taken');
      const now = Date.now();
      should(await guard.admit(entryOf('t:before', now), delivery().deliver, now)).eql({ outcome: 'delivered' });
      const takeOver = () => {
        fs.rmSync(`${file}.lock`);
        fs.writeFileSync(`${file}.lock`, JSON.stringify({ pid: process.ppid, host: os.hostname(), token: 'theirs' }));
      };
      // Taken over while one record was being written and another waited for that write: the first is
      // written but not acknowledged (found after the write, before the delivery), the second not even written.
      const deliveries = delivery();
      const during = [guard.admit(entryOf('t:writing', now), deliveries.deliver, now), guard.admit(entryOf('t:waiting', now), deliveries.deliver, now)];
      takeOver();
      for (const admission of await Promise.all(during)) should(admission).match({ outcome: 'unrecorded', problem: 'in use', holder: { pid: process.ppid } });
      const written = fs.readFileSync(file, 'utf8');
      should(written).not.containEql(compactKey(keyOf('t:waiting')));
      // Found before the next one.
      should(await guard.admit(entryOf('t:after', now), deliveries.deliver, now)).match({ outcome: 'unrecorded', problem: 'in use' });
      should(deliveries.count).equal(0);
      should(fs.readFileSync(file, 'utf8')).equal(written);
    });

    it('holds every delivery inside its window at any volume: a copy after 12,000 others is a duplicate, a late first delivery is delivered, also after a restart', async function () {
      this.timeout(60_000);
      const file = path.join(dir, 'volume.jsonl');
      const guard = new ReplayGuard(ReplayFile.at(file), '/volume');
      const now = Date.now();
      const deliveries = delivery();
      should(await guard.admit(entryOf('first', now - 4600, 300_000), deliveries.deliver, now)).eql({ outcome: 'delivered' });
      for (let from = 0; from < 12_000; from += 1000) {
        const batch = Array.from({ length: 1000 }, (_v, i) => guard.admit(entryOf(`other ${from + i}`, now, 300_000), deliveries.deliver, now));
        for (const admission of await Promise.all(batch)) should(admission).eql({ outcome: 'delivered' });
      }
      should(deliveries.count).equal(12_001);
      should(await guard.admit(entryOf('first', now - 4600, 300_000), deliveries.deliver, now)).eql({ outcome: 'duplicate' });
      // Sent 4.6 s before the others, arriving after them: not refused as stale for their number.
      should(await guard.admit(entryOf('late', now - 4600, 300_000), deliveries.deliver, now)).eql({ outcome: 'delivered' });
      should(deliveries.count).equal(12_002);
      // Restarted: every one read back from the journal.
      const reopened = ReplayFile.at(`${dir}/../${path.basename(dir)}/volume.jsonl`);
      should(reopened.stats().entries).equal(12_002);
      should(reopened.lookup('/volume', entryOf('first', now - 4600, 300_000))).equal('recorded');
      should(reopened.lookup('/volume', entryOf('other 11999', now, 300_000))).equal('recorded');
    });

    it('refuses new requests past its cap as full, delivering nothing and forgetting nothing; takes them again once entries leave at the end of their window', async function () {
      const file = path.join(dir, 'cap.jsonl');
      const replays = ReplayFile.at(file);
      const guard = new ReplayGuard(replays, '/cap', undefined, 3);
      const now = Date.now();
      const deliveries = delivery();
      for (const name of ['a', 'b', 'c']) should(await guard.admit(entryOf(name, now, 10_000), deliveries.deliver, now)).eql({ outcome: 'delivered' });
      should(await guard.admit(entryOf('d', now, 10_000), deliveries.deliver, now)).eql({ outcome: 'full' });
      // Copies of what it holds are still duplicates.
      should(await guard.admit(entryOf('a', now, 10_000), deliveries.deliver, now)).eql({ outcome: 'duplicate' });
      should(deliveries.count).equal(3);
      should(replays.stats()).eql({ entries: 3, refusedFull: 1 });
      // Restarted at the cap: still full, still holding all three.
      const reopened = ReplayFile.at(`${dir}/../${path.basename(dir)}/cap.jsonl`);
      const again = new ReplayGuard(reopened, '/cap', undefined, 3);
      should(await again.admit(entryOf('d', now, 10_000), deliveries.deliver, now)).eql({ outcome: 'full' });
      should(await again.admit(entryOf('b', now, 10_000), deliveries.deliver, now)).eql({ outcome: 'duplicate' });
      // The process holds twice the cap over all its paths: another path takes three more, then is full too.
      const other = new ReplayGuard(reopened, '/cap-other', undefined, 3);
      for (const name of ['e', 'f', 'g']) should(await other.admit(entryOf(name, now, 10_000), deliveries.deliver, now)).eql({ outcome: 'delivered' });
      should(await new ReplayGuard(reopened, '/cap-third', undefined, 3).admit(entryOf('h', now, 10_000), deliveries.deliver, now)).eql({ outcome: 'full' });
      // Once their window has ended, the bucket leaves and new requests are taken.
      should(await again.admit(entryOf('d', now + 20_000, 10_000), deliveries.deliver, now + 20_000)).eql({ outcome: 'delivered' });
      should(deliveries.count).equal(7);
    });

    it('writes its record again, whole, when the journal was replaced under it', async function () {
      const file = path.join(dir, 'replaced.jsonl');
      const guard = new ReplayGuard(ReplayFile.at(file), '/replaced');
      const now = Date.now();
      should(await guard.admit(entryOf('t:first', now), delivery().deliver, now)).eql({ outcome: 'delivered' });
      fs.writeFileSync(`${file}.new`, '');
      fs.renameSync(`${file}.new`, file);
      should(await guard.admit(entryOf('t:second', now), delivery().deliver, now)).eql({ outcome: 'delivered' });
      should(fs.readFileSync(file, 'utf8')).equal(`${bucketLine('/replaced', now, now + 1000, ['t:first', 't:second'])}\n`);
    });
  });
});

/** The pid of a process that has ended. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  return child.pid;
}
