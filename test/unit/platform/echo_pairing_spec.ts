import should from 'should';
import { sameAddress } from '../../../nodes/lib/platform/bulk';

/** Issue 27 point 6: echoes are compared with Unicode full case folding and NFKC, as README says. */
describe('bulk echo pairing', function () {
  const pairs = (a: string, b: string) => sameAddress(a) === sameAddress(b);

  it('folds case in full: ß, ẞ and SS alike, final sigma, ligatures', function () {
    should(pairs('Hauptstraße 5, Berlin', 'HAUPTSTRASSE 5, BERLIN')).be.true();
    should(pairs('GROẞE STRAẞE 1', 'grosse strasse 1')).be.true();
    should(pairs('ΟΔΟΣ ΑΘΗΝΑΣ', 'οδος αθηνας')).be.true();
    should(pairs('οδός', 'ΟΔΌΣ')).be.true();
    should(pairs('ﬁfth Avenue', 'FIFTH AVENUE')).be.true();
  });

  it('unifies compatibility forms (NFKC): full-width letters, digits and spaces, composed and decomposed accents', function () {
    should(pairs('Ｍａｉｎ　Ｓｔｒｅｅｔ　１２', 'Main Street 12')).be.true();
    should(pairs('東京都港区芝公園４丁目２−８', '東京都港区芝公園4丁目2−8')).be.true();
    should(pairs('Cafe\u0301 Street', 'CAFÉ STREET')).be.true();
  });

  it('collapses and trims white space, and still tells different addresses apart', function () {
    should(pairs('  1   Main\tStreet ', '1 main street')).be.true();
    should(pairs('1 Main Street', '2 Main Street')).be.false();
    should(pairs('Hauptstraße 5', 'Hauptstrasse 6')).be.false();
  });
});
