/**
 * The en-US texts as the Node-RED glue hands them down to the lower layers when it loads
 * (node-red/i18n.ts reads the en-US catalogs): a spec of a lower layer alone (a location parser, the
 * request gate) sees its errors in English, as under Node-RED. `.mocharc.js` requires this file.
 */
import '../../nodes/lib/node-red/i18n';

export { english } from '../../nodes/lib/util/catalog-text';
