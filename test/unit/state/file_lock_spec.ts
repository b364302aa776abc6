import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { FileLock } from '../../../nodes/lib/state/file-lock';
import { ManualClock } from '../../support/clock';
import { waitUntil } from '../../support/wait';

/** One process at a time on a file: who holds a lock, when it is free, and how its holder finds out it was taken over. */
describe('FileLock', function () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lock-'));
  after(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });
  let count = 0;
  const lockFile = () => path.join(dir, `lock-${++count}`);
  /** A lock file as another process writes it, last refreshed at `refreshedAt` (ms, on the test's clock). */
  const writeLock = (file: string, holder: { pid: number; host: string }, refreshedAt: number) => {
    fs.writeFileSync(file, JSON.stringify({ ...holder, token: 'theirs' }));
    fs.utimesSync(file, refreshedAt / 1000, refreshedAt / 1000);
  };
  const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid;

  it('is taken when free, written whole with this process, and given back', function () {
    const clock = new ManualClock();
    const file = lockFile();
    const lock = new FileLock(file, clock);
    should(lock.acquire()).be.undefined();
    should(lock.holds).be.true();
    should(JSON.parse(fs.readFileSync(file, 'utf8'))).match({ pid: process.pid, host: os.hostname() });
    // Only the lock itself is left: no temporary file.
    should(fs.readdirSync(dir).filter((name) => name.startsWith(path.basename(file)))).eql([path.basename(file)]);
    lock.release();
    should(fs.existsSync(file)).be.false();
    should(clock.pendingTimers).equal(0);
  });

  it('waits for a live holder on this host and any host, until its lock is 30 s without a refresh', function () {
    const clock = new ManualClock();
    for (const holder of [
      { pid: process.ppid, host: os.hostname() },
      { pid: 4242, host: 'another-host' },
    ]) {
      const file = lockFile();
      writeLock(file, holder, clock.now());
      const lock = new FileLock(file, clock);
      should(lock.acquire()).eql(holder);
      clock.stall(29_999);
      should(lock.acquire()).eql(holder);
      clock.stall(1);
      should(lock.acquire()).be.undefined();
      should(JSON.parse(fs.readFileSync(file, 'utf8'))).match({ pid: process.pid });
      lock.release();
    }
  });

  it('is free at once when its process has ended on this host, or is this very process (a restart with the same pid)', function () {
    const clock = new ManualClock();
    for (const pid of [deadPid(), process.pid]) {
      const file = lockFile();
      writeLock(file, { pid, host: os.hostname() }, clock.now());
      const lock = new FileLock(file, clock);
      should(lock.acquire()).be.undefined();
      lock.release();
    }
  });

  it('refreshes its file every 10 s and stops holding once another process has taken it over', async function () {
    const clock = new ManualClock();
    const file = lockFile();
    const lock = new FileLock(file, clock);
    should(lock.acquire()).be.undefined();
    fs.utimesSync(file, 0, 0);
    await clock.advance(10_000);
    await waitUntil(() => fs.statSync(file).mtimeMs === clock.now(), 'the lock to be refreshed');
    writeLock(file, { pid: 4242, host: 'another-host' }, clock.now());
    await clock.advance(10_000);
    await waitUntil(() => !lock.holds, 'the holder to find its lock taken over');
    should(clock.pendingTimers).equal(0);
    // Not ours any more: left as it is.
    lock.release();
    should(JSON.parse(fs.readFileSync(file, 'utf8'))).match({ host: 'another-host' });
  });

  it('throws when the lock cannot be written (a file where its directory should be)', function () {
    const blocker = lockFile();
    fs.writeFileSync(blocker, 'not a directory');
    should(() => new FileLock(path.join(blocker, 'lock'), new ManualClock()).acquire()).throw(/ENOTDIR|EEXIST/);
  });
});
