export declare const CHROMIUM_FLAGS: string[];
export declare const CHROMIUM_HINT: string;
export declare function findChromium(env?: NodeJS.ProcessEnv): string | null;
