/**
 * The known name closest to a mistyped one (edit distance), for a "did you mean ...?" hint; null
 * when none is close enough to be a likely typo (at most 2 edits, or a third of the name).
 */
export function closestName(name: string, known: readonly string[]): string | null {
  const wanted = name.toLowerCase();
  let best: string | null = null;
  let bestD = Infinity;
  for (const k of known) {
    const d = editDistance(wanted, k.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = k;
    }
  }
  return best !== null && bestD <= Math.max(2, Math.floor(wanted.length / 3)) ? best : null;
}

/** Levenshtein distance (insert, delete, substitute: one each). */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}
