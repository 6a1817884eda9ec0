/** What a command group module exports. */
export interface CommandGroup {
  /** Runs the group with the argv after its name; returns the exit code. */
  run(argv: string[], env: CliEnv): Promise<number | void>;
}

export interface CliEnv {
  home: string;
  /** True when stdout is a terminal (colours, spinners, prompts). */
  interactive: boolean;
}
