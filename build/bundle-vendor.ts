import fs from 'node:fs';
import path from 'node:path';
import { build, Plugin } from 'esbuild';

/**
 * The build's step for the sandbox town's libraries: replaces tsc's dist/sandbox/town/vendor.js,
 * which requires them, by one bundle (esbuild) that carries them, so they are devDependencies and
 * the pack's users install none of them. The city list keeps only the fields the town reads. Each
 * bundled package's licence is written beside the bundle, as their licences ask.
 */

/** The fields of city-timezones' cities that sandbox/town/places.ts reads. */
const CITY_FIELDS = ['city', 'city_ascii', 'lat', 'lng', 'pop', 'country', 'province'];

/** The city list beside the bundle, read when the bundle loads: parsed data, not source text the heap keeps. */
const CITIES_FILE = 'vendor.cities.json';

/** Loads city-timezones' data file from CITIES_FILE, rows of CITY_FIELDS made back into objects. */
function trimmedCities(folder: string): Plugin {
  return {
    name: 'trimmed-cities',
    setup(bundle) {
      bundle.onLoad({ filter: /city-timezones[\\/]data[\\/]cityMap\.json$/ }, (args) => {
        const cities = JSON.parse(fs.readFileSync(args.path, 'utf8')) as Array<Record<string, unknown>>;
        fs.writeFileSync(path.join(folder, CITIES_FILE), JSON.stringify(cities.map((city) => CITY_FIELDS.map((field) => city[field]))));
        // An object literal of fixed shape per city: objects that share one hidden class.
        const literal = `({ ${CITY_FIELDS.map((field, i) => `${field}: row[${i}]`).join(', ')} })`;
        const rows = `JSON.parse(require('node:fs').readFileSync(require('node:path').join(__dirname, ${JSON.stringify(CITIES_FILE)}), 'utf8'))`;
        return { contents: `module.exports = ${rows}.map((row) => ${literal});`, loader: 'js' };
      });
    },
  };
}

/** The package folder (holding package.json) of a bundled input path below node_modules. */
function packageFolder(repoRoot: string, input: string): string | undefined {
  const parts = input.split(/[\\/]/);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return undefined;
  const depth = parts[at + 1].startsWith('@') ? 3 : 2;
  return path.join(repoRoot, ...parts.slice(0, at + depth));
}

/** Bundles dist/sandbox/town/vendor.js in place and writes vendor.cities.json and vendor.LICENSES.txt beside it. */
export async function bundleVendor(repoRoot: string): Promise<void> {
  const file = path.join(repoRoot, 'dist', 'sandbox', 'town', 'vendor.js');
  const result = await build({
    entryPoints: [file],
    outfile: file,
    allowOverwrite: true,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    legalComments: 'none',
    minifyWhitespace: true,
    metafile: true,
    plugins: [trimmedCities(path.dirname(file))],
    logLevel: 'warning',
  });
  const folders = [...new Set(Object.keys(result.metafile.inputs).map((input) => packageFolder(repoRoot, input)))].filter(
    (folder): folder is string => folder !== undefined,
  );
  const notices = folders.sort().map((folder) => {
    const manifest = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      license: string;
      author?: string | { name: string };
    };
    const licenceFile = fs.readdirSync(folder).find((name) => /^licen[cs]e/i.test(name));
    const text = licenceFile
      ? fs.readFileSync(path.join(folder, licenceFile), 'utf8').trim()
      : `${manifest.license}, by ${typeof manifest.author === 'object' ? manifest.author.name : (manifest.author ?? 'its authors')}`;
    return `${manifest.name} ${manifest.version} (${manifest.license})\n\n${text}`;
  });
  fs.writeFileSync(
    path.join(path.dirname(file), 'vendor.LICENSES.txt'),
    `The libraries bundled in vendor.js, with their licences.\n\n${notices.join(`\n\n${'-'.repeat(72)}\n\n`)}\n`,
  );
}
