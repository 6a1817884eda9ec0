/** The application's version; a test keeps it equal to package.json's. */
export const APP_VERSION = "0.1.0";

/** Bumped whenever the socket protocol changes incompatibly. */
export const PROTOCOL_VERSION = 1;
