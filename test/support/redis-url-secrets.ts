/**
 * Passwords that hold each character a Redis URL gives a meaning to, and what a text must not hold of
 * them (issue 51 point 1): the Redis URL specs feed them through every form of the URL.
 */

/** The URL's delimiters, `&` and `+` (which form encoding reads as a space), `%`, a space, and characters beyond ASCII. */
export const SECRET_CHARACTERS: readonly string[] = ['@', ':', '/', ',', '?', '#', '&', '+', '%', ' ', 'ü', '🔑'];

/** A distinctive password around `char`: no three of its characters in a row are found in any text the pack writes on its own. */
export function passwordWith(char: string): string {
  return `Qz7k${char}Wx9j`;
}

/**
 * Every run of three characters of `password`, as it is and as written in a URL (percent-encoded),
 * but a lone percent-escape (`%2F`, which an error's advice may name): a text holding none of them
 * holds no part of the password.
 */
export function secretParts(password: string): string[] {
  const parts = new Set<string>();
  for (const form of [password, encodeURIComponent(password)]) {
    const chars = [...form];
    for (let i = 0; i + 3 <= chars.length; i++) parts.add(chars.slice(i, i + 3).join(''));
  }
  return [...parts].filter((part) => !/^%[0-9A-F]{2}$/.test(part));
}

/** The parts of `password` (see `secretParts`) that `text` holds; none is what every test expects. */
export function partsIn(text: string, password: string): string[] {
  return secretParts(password).filter((part) => text.includes(part));
}
