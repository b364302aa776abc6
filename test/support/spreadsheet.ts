/**
 * How a spreadsheet splits a CSV text into cells, leniently, as Excel and LibreOffice Calc do: with
 * the list separator of its locale (`,` in en-US, `;` in de-DE, fr-FR and most of Europe). A field that
 * starts with a quote is quoted up to its closing quote (a doubled quote is one quote), and what
 * follows the closing quote up to the separator is kept as text; a quote anywhere else is a character.
 * Outside quotes, CR, LF and CRLF end the row. Written apart from the pack's CSV code on purpose.
 */
export function spreadsheetCells(text: string, separator: ',' | ';'): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let i = 0;
  let fieldStart = true;
  const endCell = () => {
    row.push(cell);
    cell = '';
    fieldStart = true;
  };
  while (i < text.length) {
    const c = text[i];
    if (fieldStart && c === '"') {
      fieldStart = false;
      i++;
      for (; i < text.length; i++) {
        if (text[i] !== '"') cell += text[i];
        else if (text[i + 1] === '"') cell += text[i++];
        else break;
      }
      i++;
      continue;
    }
    fieldStart = false;
    if (c === separator) {
      endCell();
    } else if (c === '\r' || c === '\n') {
      endCell();
      rows.push(row);
      row = [];
      if (c === '\r' && text[i + 1] === '\n') i++;
    } else {
      cell += c;
    }
    i++;
  }
  if (cell !== '' || row.length > 0) {
    endCell();
    rows.push(row);
  }
  return rows;
}

/** A plain number, which a spreadsheet reads as that number however it starts. */
const PLAIN_NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * The cells a spreadsheet would evaluate as a formula: those starting with one of OWASP's characters
 * (`=`, `+`, `-`, `@`, tab, CR, LF), plain numbers aside.
 */
export function formulaCells(rows: readonly string[][]): string[] {
  return rows.flat().filter((cell) => /^[=+\-@\t\r\n]/.test(cell) && !PLAIN_NUMBER.test(cell));
}
