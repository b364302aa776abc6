import should from 'should';
import { jobMessage } from '../../../nodes/lib/platform/jobs';

/** A job handle's `message` (issue 28): what msg.jobs and the stored job keep of it. */
describe('jobMessage', function () {
  it('keeps a plain message as it is', function () {
    should(jobMessage('computing (2/3)')).equal('computing (2/3)');
  });

  it('masks a bearer token and a secret-like member the service repeats', function () {
    should(jobMessage('retrying with Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0.sig')).equal('retrying with Bearer ***');
    should(jobMessage('bad key: "apiKey":"k-123456"')).not.containEql('k-123456');
  });

  it('puts it on one line and keeps at most 200 characters', function () {
    should(jobMessage('line one\r\n\tline two ')).equal('line one line two');
    const long = jobMessage('y'.repeat(1000)) as string;
    should(long).have.length(200);
    should(long.endsWith('…')).be.true();
  });

  it('is undefined for a message that is not a text, or empty', function () {
    for (const value of [undefined, null, 42, { text: 'x' }, '', '   ']) should(jobMessage(value)).be.undefined();
  });
});
