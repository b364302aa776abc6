/**
 * The sandbox's own CSV reading and writing, as strict as RFC 4180 and written apart from the
 * node's (nodes/lib/format/csv.ts), so that a bug in the node's CSV cannot hide behind the same bug here.
 */

/** The records of a whole CSV text: CRLF or LF line ends, quoted fields with doubled quotes; throws on anything else. */
export function readCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let position = 0;
  const atLineEnd = () => text.startsWith('\r\n', position) || text[position] === '\n';
  while (position < text.length) {
    let field: string;
    if (text[position] === '"') {
      const close = closingQuote(text, position + 1);
      field = text
        .slice(position + 1, close)
        .split('""')
        .join('"');
      position = close + 1;
      if (position < text.length && text[position] !== ',' && !atLineEnd()) {
        throw new Error(`text after a closing quote at offset ${position}`);
      }
    } else {
      const end = nextDelimiter(text, position);
      field = text.slice(position, end);
      if (field.includes('"')) throw new Error(`a quote inside an unquoted field at offset ${position}`);
      if (field.includes('\r')) throw new Error(`a bare CR at offset ${position}`);
      position = end;
    }
    record.push(field);
    if (text[position] === ',') {
      position++;
      if (position === text.length) record.push('');
      continue;
    }
    if (position < text.length) position += text[position] === '\r' ? 2 : 1;
    records.push(record);
    record = [];
  }
  if (record.length > 0) records.push(record);
  return records;
}

function closingQuote(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] !== '"') continue;
    if (text[i + 1] === '"') i++;
    else return i;
  }
  throw new Error('an unterminated quoted field');
}

function nextDelimiter(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === ',' || text[i] === '\n' || (text[i] === '\r' && text[i + 1] === '\n')) return i;
  }
  return text.length;
}

/** A CSV text with CRLF line ends, every field that needs it quoted. */
export function toCsv(rows: ReadonlyArray<readonly string[]>): string {
  const quote = (field: string) => (/[",\r\n]/.test(field) ? `"${field.replace(/"/g, '""')}"` : field);
  return rows.map((row) => `${row.map(quote).join(',')}\r\n`).join('');
}
