/** A failure to start that one line explains (server.ts prints it without a stack). */
export class StartupError extends Error {}
