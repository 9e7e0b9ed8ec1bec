// A name in a directory, spelled without path's join. join normalizes the whole path a character
// at a time in JavaScript, and the paths asked about at every start and turn (the sandbox's key
// files, the instruction files, PATH's directories) made V8 optimize that loop within a short
// run, which starts its optimizing compiler (~4 MiB, and its time). For a normalized directory
// and a plain name the result is join's; other paths are normalized where they are compared.

/** `name` (a file name, or a relative path without `.` or `..`) in directory `dir`. */
export function childPath(dir: string, name: string): string {
  return dir.endsWith('/') ? dir + name : `${dir}/${name}`;
}
