import { Town } from './network';

/** The seed of the town every endpoint responds from, unless a test makes its own. */
const TOWN_SEED = 1;

const towns = new Map<number, Town>();

/** The town of a seed, made once (its cells are generated as they are used). */
export function townOf(seed = TOWN_SEED): Town {
  let town = towns.get(seed);
  if (!town) {
    town = new Town(seed);
    towns.set(seed, town);
  }
  return town;
}
