import should from 'should';
import { redactHeader } from '../../../nodes/lib/util/masking';

/** Issue 27 point 7: a response header's text is masked as a body's is. */
describe('redactHeader', function () {
  const KEY = 'key-ABC_123.x~';

  it('masks a secret as written, URL-encoded, or spelt with escapes of unreserved characters', function () {
    should(redactHeader(`/v1/geocode/bulk/${KEY}`, [KEY])).equal('/v1/geocode/bulk/***');
    should(redactHeader(`/jobs/${[...KEY].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')}`, [KEY])).equal('/jobs/***');
    should(redactHeader('/jobs/a%2Fb?x=1', [KEY])).equal('/jobs/a%2Fb?x=1');
    should(redactHeader(`application/json; charset=${KEY}`, [KEY])).equal('application/json; charset=***');
  });

  it('masks credential-named parameters and bearer tokens, as in a body', function () {
    should(redactHeader('text/csv; token=abc', [])).equal('text/csv; token=***');
    should(redactHeader('Bearer abc.def', [])).equal('Bearer ***');
  });

  it('redacts a text seen before as it did, for the same secrets, and afresh for other secrets', function () {
    const ownList = Object.freeze([KEY]);
    const text = `application/json; charset=${KEY}`;
    for (let i = 0; i < 3; i++) should(redactHeader(text, ownList)).equal('application/json; charset=***');
    should(redactHeader(text, ['other-secret'])).equal(text);
    should(redactHeader(text, [KEY, 'other-secret'])).equal('application/json; charset=***');
    should(redactHeader('application/json; charset=utf-8', ownList)).equal('application/json; charset=utf-8');
  });

  it('leaves other headers as they are', function () {
    should(redactHeader('', [KEY])).equal('');
    should(redactHeader('gzip, br', [KEY])).equal('gzip, br');
  });
});
