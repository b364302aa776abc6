import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { ThrottledReport } from '../../../nodes/lib/util/async';
import { readJsonText } from '../../../nodes/lib/util/text';
import { ReplayEntry, ReplayFile, ReplayGuard } from '../../../nodes/lib/state/replays';
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
    /** An accepted request `key` with t `t`, in its window for `windowMs`. */
    const entryOf = (key: string, t: number, windowMs = 1000): ReplayEntry => ({ key, legacyKey: `${key}:legacy`, timestampMs: t, expiresAt: t + windowMs });
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
      should(fs.readFileSync(file, 'utf8')).equal(`["/a","t:digest",${now},${now + 1000}]\n`);
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
          `["/a","t:digest",${now},${now + 1000}]`,
          `["/b","t:digest",${now},${now + 1000}]`,
          `["/a","t:other",${now},${now + 1000}]`,
          `["/a","t:other",0]`,
          `["/a","t:other",${now},${now + 1000}]`,
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
      should(fs.readFileSync(file, 'utf8')).equal(`["/blocked","t:blocked",${entry.timestampMs},${entry.expiresAt}]\n`);
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
      fs.writeFileSync(file, `["/held","t:theirs",${now},${now + 60_000}]\n`);
      fs.writeFileSync(`${file}.lock`, JSON.stringify({ pid: deadPid(), host: os.hostname(), token: 'theirs' }));
      should(await guard.admit(entryOf('t:theirs', now, 60_000), deliveries.deliver)).eql({ outcome: 'duplicate' });
      should(await guard.admit(entryOf('t:mine', now, 60_000), deliveries.deliver)).eql({ outcome: 'delivered' });
      should(deliveries.count).equal(1);
      // Rewritten whole from both, by the one holder now.
      should(fs.readFileSync(file, 'utf8').trim().split('\n').sort()).eql([
        `["/held","t:mine",${now},${now + 60_000}]`,
        `["/held","t:theirs",${now},${now + 60_000}]`,
      ]);
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
      fs.writeFileSync(file, `["/legacy","${sec}:digest",${sec * 1000 + 300_000}]\n`);
      const replays = ReplayFile.at(file);
      const request = (t: number) => ({ key: `${t}:identity`, legacyKey: `${t}:digest`, timestampMs: t * 1000, expiresAt: t * 1000 + 900_000 });
      should(replays.lookup('/legacy', request(sec))).equal('recorded');
      should(replays.lookup('/legacy', { ...request(sec - 200), legacyKey: 'other' })).equal('absent');
      should(replays.lookup('/legacy', { ...request(sec - 400), legacyKey: 'other' })).equal('forgotten');
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
      should(written).not.containEql('t:waiting');
      // Found before the next one.
      should(await guard.admit(entryOf('t:after', now), deliveries.deliver, now)).match({ outcome: 'unrecorded', problem: 'in use' });
      should(deliveries.count).equal(0);
      should(fs.readFileSync(file, 'utf8')).equal(written);
    });

    it('writes its record again, whole, when the journal was replaced under it', async function () {
      const file = path.join(dir, 'replaced.jsonl');
      const guard = new ReplayGuard(ReplayFile.at(file), '/replaced');
      const now = Date.now();
      should(await guard.admit(entryOf('t:first', now), delivery().deliver, now)).eql({ outcome: 'delivered' });
      fs.writeFileSync(`${file}.new`, '');
      fs.renameSync(`${file}.new`, file);
      should(await guard.admit(entryOf('t:second', now), delivery().deliver, now)).eql({ outcome: 'delivered' });
      should(fs.readFileSync(file, 'utf8').trim().split('\n')).eql([
        `["/replaced","t:first",${now},${now + 1000}]`,
        `["/replaced","t:second",${now},${now + 1000}]`,
      ]);
    });
  });
});

/** The pid of a process that has ended. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  return child.pid;
}
