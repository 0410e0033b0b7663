// A command run on a pseudo-terminal (util-linux `script`), so a program that draws for a person
// (the batch CLI's progress bar) does so: for the tests and the bench that watch it.

/** `spawn`'s file and arguments that run `argv` on a pseudo-terminal, each word quoted for the shell. */
export function onPseudoTerminal(argv: readonly string[]): [file: string, args: string[]] {
  const command = argv.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
  return ['script', ['-qfec', command, '/dev/null']];
}
