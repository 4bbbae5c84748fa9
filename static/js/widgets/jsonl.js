// Reading JSON Lines files (what `python -m benchmarks <benchmark> evaluate` writes), shared by widget scripts.
export function parseJsonLine(line, i) {
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`line ${i + 1} is not valid JSON`);
  }
}
