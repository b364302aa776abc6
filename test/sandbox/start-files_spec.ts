import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { BACKUPS_KEPT, backUp, credentialKeys, encryptCredentials, listBackups, readCredentials } from './start-files';

/**
 * What `npm start` reads and keeps in its user directory (issue 51 point 6), on real files: which
 * secret Node-RED is given and reads with, what a credentials file holds, and the backups. The
 * restart suite (test/restart/start_restart.ts) runs the same through real `npm start` processes.
 */
describe('sandbox: npm start user directory files (start-files)', function () {
  let dir = '';
  const shown = (file: string): string => path.basename(file);

  beforeEach(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'start-files-'));
  });

  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('credentialKeys', function () {
    const generated = (): void => fs.writeFileSync(path.join(dir, '.config.runtime.json'), JSON.stringify({ _credentialSecret: 'generated' }));

    it('gives Node-RED no secret (plain text) when there is none, and the user secret when given', function () {
      should(credentialKeys(dir, {}, shown)).eql({ setting: false, nodeRedReads: undefined, known: [] });
      should(credentialKeys(dir, { NODE_RED_CREDENTIAL_SECRET: '' }, shown).setting).equal(false);
      const keys = credentialKeys(dir, { NODE_RED_CREDENTIAL_SECRET: 'mine' }, shown);
      should(keys.setting).equal('mine');
      should(keys.nodeRedReads).eql({ secret: 'mine', source: 'NODE_RED_CREDENTIAL_SECRET' });
    });

    it("lets Node-RED use the _credentialSecret it generated, and reads with it first when the user's is given too (Node-RED moves to the user's at its next save)", function () {
      generated();
      const alone = credentialKeys(dir, {}, shown);
      should(alone.setting).be.undefined();
      should(alone.nodeRedReads).eql({ secret: 'generated', source: 'the _credentialSecret in .config.runtime.json' });
      const both = credentialKeys(dir, { NODE_RED_CREDENTIAL_SECRET: 'mine' }, shown);
      should(both.setting).equal('mine');
      should(both.nodeRedReads?.secret).equal('generated');
      should(both.known.map((key) => key.secret)).eql(['mine', 'generated']);
    });
  });

  describe('readCredentials', function () {
    const file = (): string => path.join(dir, 'flows_cred.json');
    const secret = { secret: 'mine', source: 'NODE_RED_CREDENTIAL_SECRET' };

    it('opens a file with the secret that encrypted it, and only with it', function () {
      fs.writeFileSync(file(), JSON.stringify(encryptCredentials('mine', { n1: { apiKey: 'k' } })));
      should(readCredentials(file(), [{ secret: 'other', source: 'x' }, secret], shown)).eql({
        kind: 'decrypted',
        credentials: { n1: { apiKey: 'k' } },
        secret,
      });
      should(readCredentials(file(), [{ secret: 'other', source: 'x' }], shown)).eql({ kind: 'sealed' });
      should(readCredentials(file(), [], shown)).eql({ kind: 'sealed' });
    });

    it('reads a plain file as it is ("$" beside other members is not encrypted, as Node-RED reads it) and refuses what is not an object', function () {
      should(readCredentials(file(), [], shown)).eql({ kind: 'none' });
      fs.writeFileSync(file(), JSON.stringify({ $: 'x', n1: { secret: 's' } }));
      should(readCredentials(file(), [secret], shown)).eql({ kind: 'plain', credentials: { $: 'x', n1: { secret: 's' } } });
      fs.writeFileSync(file(), '[]');
      should(() => readCredentials(file(), [secret], shown)).throw(/flows_cred\.json is not a JSON object of credentials/);
      fs.writeFileSync(file(), '{');
      should(() => readCredentials(file(), [secret], shown)).throw(/flows_cred\.json cannot be read/);
    });
  });

  describe('backUp', function () {
    const flows = (): string => path.join(dir, 'flows.json');
    const credentials = (): string => path.join(dir, 'flows_cred.json');
    const backupsDir = (): string => path.join(dir, 'backups');

    it('makes none when there is nothing to keep, one per change, and none for the bytes of the newest backup', function () {
      should(backUp(dir, [flows(), credentials()])).be.undefined();
      fs.writeFileSync(flows(), '[1]');
      const first = backUp(dir, [flows(), credentials()], new Date('2026-01-01T00:00:00.000Z'));
      should(first).match({ made: true, removed: [] });
      should(fs.readdirSync(first?.dir ?? '')).eql(['flows.json']);
      should(backUp(dir, [flows(), credentials()], new Date('2026-01-02T00:00:00.000Z'))).eql({ dir: first?.dir, made: false, removed: [] });
      fs.writeFileSync(credentials(), '{}');
      const second = backUp(dir, [flows(), credentials()], new Date('2026-01-02T00:00:00.000Z'));
      should(second).match({ made: true });
      should(fs.readFileSync(path.join(second?.dir ?? '', 'flows_cred.json'), 'utf8')).equal('{}');
      should(listBackups(backupsDir())).eql(['2026-01-01T00-00-00-000Z', '2026-01-02T00-00-00-000Z']);
      should(fs.statSync(second?.dir ?? '').mode & 0o077).equal(0);
    });

    it(`keeps the newest ${BACKUPS_KEPT}, the one just made even when the others are named later, and what is not a backup`, function () {
      fs.mkdirSync(backupsDir());
      const future = [1, 2, 3, 4, 5, 6].map((day) => `2099-01-0${day}T00-00-00-000Z`);
      for (const name of future) fs.mkdirSync(path.join(backupsDir(), name));
      fs.writeFileSync(path.join(backupsDir(), 'notes.txt'), 'mine');
      fs.writeFileSync(flows(), '[]');
      const made = backUp(dir, [flows()], new Date('2026-01-01T00:00:00.000Z'));
      should(made?.removed).eql(future.slice(0, 2));
      should(listBackups(backupsDir())).eql(['2026-01-01T00-00-00-000Z', ...future.slice(2)]);
      should(fs.existsSync(path.join(backupsDir(), 'notes.txt'))).be.true();
      // Two in the same millisecond get names of their own.
      fs.writeFileSync(flows(), '[2]');
      should(path.basename(backUp(dir, [flows()], new Date('2026-01-01T00:00:00.000Z'))?.dir ?? '')).equal('2026-01-01T00-00-00-000Z-2');
    });
  });
});
