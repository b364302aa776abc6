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

/**
 * Loads city-timezones' data file as a module of CITY_FIELDS rows, made back into objects when loaded:
 * half the size of the objects themselves.
 */
const trimmedCities: Plugin = {
  name: 'trimmed-cities',
  setup(bundle) {
    bundle.onLoad({ filter: /city-timezones[\\/]data[\\/]cityMap\.json$/ }, (args) => {
      const cities = JSON.parse(fs.readFileSync(args.path, 'utf8')) as Array<Record<string, unknown>>;
      const rows = cities.map((city) => CITY_FIELDS.map((field) => city[field]));
      const contents = `const fields = ${JSON.stringify(CITY_FIELDS)};
module.exports = ${JSON.stringify(rows)}.map((row) => Object.fromEntries(fields.map((field, i) => [field, row[i]])));`;
      return { contents, loader: 'js' };
    });
  },
};

/** The package folder (holding package.json) of a bundled input path below node_modules. */
function packageFolder(repoRoot: string, input: string): string | undefined {
  const parts = input.split(/[\\/]/);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return undefined;
  const depth = parts[at + 1].startsWith('@') ? 3 : 2;
  return path.join(repoRoot, ...parts.slice(0, at + depth));
}

/** Bundles dist/sandbox/town/vendor.js in place and writes vendor.LICENSES.txt beside it. */
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
    plugins: [trimmedCities],
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
