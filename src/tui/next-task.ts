// A screen's background work (laying a long transcript out again after a resize; clm's reading of
// a resumed session, its replay, the markdown warm-up) runs a step at a time, each in a task of
// its own, so that keys are read and drawn between the steps.
// The callers take turns: one of them goes on per task. Each with a timer of its own would have
// all their steps run back to back in one turn of the event loop, and a key would wait for the
// sum of them.

const waiting: (() => void)[] = [];

/** Resolves in a task of its own, after keys that came meanwhile have been read and drawn. */
export function nextTask(): Promise<void> {
  return new Promise((r) => {
    if (waiting.push(r) === 1) setTimeout(nextTurn, 0);
  });
}

function nextTurn(): void {
  waiting.shift()?.();
  if (waiting.length) setTimeout(nextTurn, 0);
}
