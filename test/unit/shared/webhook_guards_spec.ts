import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { ThrottledReport } from '../../../nodes/lib/util/async';
import { readJsonText } from '../../../nodes/lib/util/text';
import { ReplayFile, ReplayGuard } from '../../../nodes/lib/shared/replays';
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

    it('remembers an entry per path until the last millisecond of its window, on disk before accepting', async function () {
      const file = path.join(dir, 'replays.jsonl');
      const replays = ReplayFile.at(file, (err) => should.fail(err, undefined, 'no write error expected'));
      const now = Date.now();
      const entry = { key: 't:digest', expiresAt: now + 1000 };
      const a = new ReplayGuard(replays, '/a');
      should(await a.accept(entry, now)).be.true();
      should(fs.readFileSync(file, 'utf8')).equal(`["/a","t:digest",${now + 1000}]\n`);
      should(await a.accept(entry, now + 1000)).be.false();
      should(await new ReplayGuard(replays, '/b').accept(entry, now)).be.true();
      await a.withdraw(entry);
      should(fs.readFileSync(file, 'utf8')).equal(`["/a","t:digest",${now + 1000}]\n["/b","t:digest",${now + 1000}]\n["/a","t:digest",0]\n`);
      should(await a.accept(entry, now)).be.true();
      // Read back as another process would: /a and /b remembered, a torn last line skipped.
      fs.appendFileSync(file, '["/c","t:dig');
      // The same file under another name: a new ReplayFile, reading the journal as a restarted Node-RED would.
      const reopened = ReplayFile.at(`${dir}/../${path.basename(dir)}/replays.jsonl`, () => undefined);
      should(reopened.remember('/a', entry, now)).be.false();
      should(reopened.remember('/b', entry, now)).be.false();
      should(reopened.remember('/c', entry, now)).be.true();
    });
  });
});
