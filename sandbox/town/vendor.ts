/**
 * The town's third-party libraries, in one module: the build bundles its compiled file into one
 * self-contained file (build/bundle-vendor.ts), so the pack installs none of them. Everything in
 * sandbox/ takes them from here.
 */
export { default as TinyQueue } from 'tinyqueue';
export { default as concaveman } from 'concaveman';
export { default as polygonClipping } from 'polygon-clipping';
export { cityMapping } from 'city-timezones';
export type { MultiPolygon } from 'polygon-clipping';
