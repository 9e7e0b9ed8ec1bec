// A usage or start-up problem of the program: the message to print and the exit status. Its own
// module so that paths that only report one (main, the resume picker) do not load the runtime.

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}
