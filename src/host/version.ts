// The version the User-Agent header announces. Kept as a constant (not read from package.json at
// run time) so the host needs no file I/O at start-up; a test checks it matches package.json.
export const CLM_VERSION = '0.2.0';
